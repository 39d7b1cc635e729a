# pkg.mk - the flags of the libraries attn builds with, from pkg-config,
# for the Makefile and for tests/fuzz/fuzz.mk, which make also runs on
# its own (make -f tests/fuzz/fuzz.mk).  Recursive (=) so that pkg-config
# runs after `deps` has installed it.
CJSON_CFLAGS  = $(shell pkg-config --cflags libcjson)
CJSON_LIBS    = $(shell pkg-config --libs libcjson)
# libzip reads .npz archives; zlib's CRC-32 goes into those attn writes.
# libzip is not linked but loaded by the first archive read
# (lib/zip_load.c), by the soname of the library -lzip would link.
ZIP_CFLAGS    = $(shell pkg-config --cflags libzip zlib)
ZIP_LIBS      = $(shell pkg-config --libs zlib)
ZIP_SONAME    = $(shell objdump -p "$$($(CC) -print-file-name=libzip.so)" \
                  2>/dev/null | sed -n 's/^ *SONAME *//p')
# ncursesw, the wide-character build, where pkg-config knows it.
CURSES_PC     = $(shell pkg-config --exists ncursesw 2>/dev/null && \
                  echo ncursesw || echo ncurses)
CURSES_CFLAGS = $(shell pkg-config --cflags $(CURSES_PC))
CURSES_LIBS   = $(shell pkg-config --libs $(CURSES_PC))
