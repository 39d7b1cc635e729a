# js2c.mk - the page's script as C strings, BUILD/gen/print_html_js.c
# for any build directory: the Makefile's builds and tests/fuzz/fuzz.mk's,
# which make runs on its own (make -f tests/fuzz/fuzz.mk) and includes.
%/gen/print_html_js.c: cli/print_html.js tools/js2c.sh
	@mkdir -p $(@D)
	sh tools/js2c.sh print_html_js cli/print_html.js >$@.tmp
	mv $@.tmp $@
