# tools/release.mk - make dist, dist-test and deb-test (the tarball and
# the Debian packages), and the packages CI installs.
# Included by the top Makefile, whose variables it reads ($(BUILD),
# $(ATTN), $(TIMED), ...); make from the top of the tree.

# make dist: attn-VERSION.tar.gz of the last commit, the same bytes
# whoever makes it (tools/dist.sh says how); it builds outside git and
# says its version there too.
dist:
	@sh tools/dist.sh

# The tarball made twice, compared, read back, and built and tested
# outside git (tests/dist.sh).
dist-test: test-deps
	$(TIMED) 'dist-test' sh tests/dist.sh

# The Debian packages of debian/ built, linted, installed and used
# (tests/deb.sh); CI installs them with dpkg (DEB_INSTALL=dpkg).
DEB_PKGS = $(BUILD_PKGS) $(MPI_PKGS) build-essential debhelper dpkg-dev \
           lintian jq locales zsh

deb-test:
	@sh tests/install-deps.sh $(DEB_PKGS)
	@$(MAKE) --no-print-directory $(ATTN)
	$(TIMED) '$(BUILD) deb-test' env BUILD_PKGS='$(BUILD_PKGS)' \
	    TEST_PKGS='$(TEST_PKGS)' MPI_PKGS='$(MPI_PKGS)' \
	    sh tests/deb.sh ./$(ATTN)

# Every package CI needs, in one apt-get: its later steps run side by
# side, and two apt-gets at once would fight for dpkg's lock.
ci-deps:
	@sh tests/install-deps.sh $(sort $(BUILD_PKGS) $(TEST_PKGS) \
	    $(DEB_PKGS) valgrind $(FUZZ_PKGS))
