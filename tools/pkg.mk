# pkg.mk - the flags of the libraries attn builds with, from pkg-config,
# for the Makefile and for tests/fuzz/fuzz.mk, which make also runs on
# its own (make -f tests/fuzz/fuzz.mk).  Recursive (=) so that pkg-config
# runs after `deps` has installed it.
CJSON_CFLAGS  = $(shell pkg-config --cflags libcjson)
CJSON_LIBS    = $(shell pkg-config --libs libcjson)
ZIP_CFLAGS    = $(shell pkg-config --cflags libzip)
# libzip is opened by lib/zip_load.c on the first .npz read or written
# (dlopen), by the soname of the library pkg-config names: its header is
# needed, not its link flags.  Empty when libzip is missing, and
# zip_load.c then says so.
ZIP_SONAME    = $(shell objdump -p "$$(pkg-config --variable=libdir \
                  libzip)/libzip.so" 2>/dev/null | sed -n 's/^ *SONAME *//p')
ZIP_DEFS      = $(if $(ZIP_SONAME),-DATTN_ZIP_SONAME='"$(ZIP_SONAME)"') \
                $(if $(ZLIB_SONAME),-DATTN_ZLIB_SONAME='"$(ZLIB_SONAME)"')
# zlib likewise (its CRC-32 for the .npz archives attn writes).
ZLIB_SONAME   = $(shell objdump -p "$$(pkg-config --variable=libdir \
                  zlib)/libz.so" 2>/dev/null | sed -n 's/^ *SONAME *//p')
# ncursesw, the wide-character build, where pkg-config knows it.
CURSES_PC     = $(shell pkg-config --exists ncursesw 2>/dev/null && \
                  echo ncursesw || echo ncurses)
CURSES_CFLAGS = $(shell pkg-config --cflags $(CURSES_PC))
CURSES_LIBS   = $(shell pkg-config --libs $(CURSES_PC))
