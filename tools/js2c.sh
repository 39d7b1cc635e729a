#!/bin/sh
# js2c.sh NAME FILE - FILE as the C array NAME of strings, one a line with
# its newline, then NULL: how the HTML page's script (cli/print_html.js)
# gets into attn while staying a JavaScript file of its own.  One string
# a line keeps each within the length C compilers must accept; '?' is
# escaped so that no trigraph can form.
set -eu
tab=$(printf '\t')
printf '/* Made from %s by tools/js2c.sh: edit that file. */\n' "$2"
printf '#include <stddef.h>\n\nextern const char *const %s[];\n' "$1"
printf 'const char *const %s[] = {\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e "s/^/$tab\"/" \
    -e 's/$/\\n",/' "$2"
printf '\tNULL\n};\n'
