/*
 * workbench_draw.c - attn workbench on a terminal, through ncurses: the
 * screen that workbench_screen writes, drawn line by line with its spans
 * as attributes and colour pairs, and each key read handed to
 * workbench_key; and workbench_main, which checks for a terminal, opens
 * the workbench (workbench.c) and draws it.  Nothing here knows what the
 * workbench shows.
 *
 * The terminal is always given back as it was: endwin runs on q, at exit
 * (atexit), and from a handler on SIGINT, SIGTERM, SIGHUP and SIGQUIT and
 * on the signals of a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT),
 * which then take their default action, so that the exit status still
 * tells the signal.  (endwin is not async-signal-safe; ncurses's own
 * handlers call it the same way, and the process ends right after.)
 * ncurses handles SIGWINCH and SIGTSTP itself: a resize arrives as
 * KEY_RESIZE, and the screen is written again for the new size.
 *
 * Colour: heatmap cells take one of the nine 256-colour steps of
 * heatmap_xterm256 as a colour pair, where the terminal has 256 colours
 * and --color and NO_COLOR allow; otherwise workbench_screen writes
 * shade characters.  The screen is UTF-8 whatever the locale, as
 * --heatmap's output is: ncursesw passes it through with LC_CTYPE the
 * user's when that is UTF-8, else C.UTF-8.  LC_NUMERIC is never
 * touched.
 */
#define _POSIX_C_SOURCE 200809L
#include <curses.h>
#include <term.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn.h"
#include "print.h"
#include "workbench.h"

/* Whether the terminal is ncurses' now, for the handlers. */
static volatile sig_atomic_t taken;

/* The signals after which the terminal is given back. */
static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV,
	SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NSIGNALS (sizeof signals / sizeof signals[0])

/* The steps of the colour scale, a colour pair each (pair 1 + k). */
#define STEPS 9

static void
give_back(void)
{
	if (taken && !isendwin())
		endwin();
	taken = 0;
}

/* The terminal back, then the signal's default action. */
static void
on_signal(int sig)
{
	give_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Colour pairs for the heatmap's steps, when colour is wanted and the
 * terminal has 256 colours; returns whether it does. */
static int
draw_colors(const struct options *o)
{
	const char *no = getenv("NO_COLOR");
	short k;

	if (o->color == COLOR_NEVER || (o->color == COLOR_AUTO &&
	    no != NULL && *no != '\0') || !has_colors() ||
	    start_color() == ERR || COLORS < 256 || COLOR_PAIRS <= STEPS)
		return 0;
	use_default_colors();
	for (k = 0; k < STEPS; k++)
		init_pair((short)(k + 1), COLOR_BLACK,
		    (short)heatmap_xterm256(k / (STEPS - 1.0)));
	return 1;
}

/* The colour pair of position pos of the scale: the step whose colour
 * heatmap_xterm256 gives it. */
static short
pair_of(double pos)
{
	short k;

	for (k = 0; k < STEPS; k++)
		if (heatmap_xterm256(k / (STEPS - 1.0)) ==
		    heatmap_xterm256(pos))
			return (short)(k + 1);
	return 0;
}

/* The screen as workbench_screen wrote it. */
static void
draw_screen(const struct wb_screen *s)
{
	size_t i;

	erase();
	for (i = 0; i < s->rows; i++)
		if (s->line[i] != NULL)
			mvaddstr((int)i, 0, s->line[i]);
	for (i = 0; i < s->nspans; i++) {
		const struct wb_span *p = &s->span[i];

		mvchgat((int)p->line, (int)p->col, (int)p->width,
		    p->look == WB_BOLD ? A_BOLD : p->look == WB_MARK ?
		    A_REVERSE : A_NORMAL, p->look == WB_HEAT ?
		    pair_of(p->pos) : 0, NULL);
	}
	move((int)s->rows - 1, 0);
	refresh();
}

/* A key from getch as workbench_key takes it; -1 for no key. */
static int
draw_key(int ch)
{
	switch (ch) {
	case KEY_UP:
		return WB_KEY_UP;
	case KEY_DOWN:
		return WB_KEY_DOWN;
	case KEY_RIGHT:
		return WB_KEY_RIGHT;
	case KEY_LEFT:
		return WB_KEY_LEFT;
	case KEY_RESIZE:
		return WB_KEY_RESIZE;
	case ERR:
		return -1;
	}
	return ch;
}

/* The terminal's name for messages, escaped: TERM is any bytes. */
static const char *
term_name(char *buf, size_t size)
{
	const char *t = getenv("TERM");

	if (t == NULL)
		t = "";
	attn_text_preview(buf, size - 4, t, strlen(t));
	return buf;
}

enum attn_status
workbench_draw(struct workbench *wb, const struct options *o,
    struct attn_error *err)
{
	static int registered;
	struct sigaction sa, old[NSIGNALS];
	enum attn_status status = ATTN_OK;
	struct wb_screen scr;
	SCREEN *term;
	char name[64 + 4];
	int color, rows, cols, key;
	size_t k;

	if (setlocale(LC_CTYPE, "") == NULL ||
	    strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
	/* term_check found the terminal usable before any input was read */
	if ((term = newterm(NULL, stdout, stdin)) == NULL)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "attn "
		    "workbench cannot drive this terminal (TERM=%s)",
		    term_name(name, sizeof name));
	taken = 1;
	if (!registered)
		registered = atexit(give_back) == 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (k = 0; k < NSIGNALS; k++)
		sigaction(signals[k], &sa, &old[k]);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	color = draw_colors(o);
	for (;;) {
		getmaxyx(stdscr, rows, cols);
		if ((status = workbench_screen(wb, rows > 0 ? (size_t)rows : 0,
		    cols > 0 ? (size_t)cols : 0, color, &scr, err)) !=
		    ATTN_OK)
			break;
		draw_screen(&scr);
		wb_screen_free(&scr);
		errno = 0;
		/* no key: a signal came (go on), or input ended (stop) */
		if ((key = draw_key(getch())) < 0 && errno != EINTR)
			break;
		if (key >= 0 && workbench_key(wb, key))
			break;
		/* after a resize the terminal may have moved what it showed
		 * (lines back from its scrollback): draw every cell again */
		if (key == WB_KEY_RESIZE)
			clearok(curscr, TRUE);
	}
	give_back();
	delscreen(term);
	for (k = 0; k < NSIGNALS; k++)
		sigaction(signals[k], &old[k], NULL);
	return status;
}

/*
 * Whether ncurses can drive the terminal of standard output: its TERM
 * is described (terminfo) and moves the cursor (cup).  A generic or
 * hard-copy type, such as TERM=dumb, is not, and on one the screen would
 * be written onto one line.  The description is read and freed here,
 * before any input is read.
 */
static enum attn_status
term_check(struct attn_error *err)
{
	TERMINAL *t;
	const char *cup;
	char name[64 + 4];
	int errret = 0, ok;

	ok = setupterm(NULL, STDOUT_FILENO, &errret) == OK;
	if (ok) {
		cup = tigetstr("cup");
		ok = cup != NULL && cup != (char *)-1 && *cup != '\0';
	}
	if ((t = cur_term) != NULL) {
		set_curterm(NULL);
		del_curterm(t);
	}
	if (!ok)
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "attn "
		    "workbench cannot drive this terminal (TERM=%s): it needs "
		    "one that moves the cursor", term_name(name, sizeof name));
	return ATTN_OK;
}

enum attn_status
workbench_main(struct options *o, struct attn_error *err)
{
	struct workbench wb;
	enum attn_status status;

	/* before any input is read: a terminal is what it needs */
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return attn_error_set(err, ATTN_ERR_USAGE, NULL, 0, 0, "attn "
		    "workbench is interactive: it needs a terminal on standard "
		    "input and output (to print stages, run attn itself)");
	if ((status = term_check(err)) != ATTN_OK)
		return status;
	status = workbench_open(&wb, o, err);
	if (status == ATTN_OK)
		status = workbench_draw(&wb, o, err);
	workbench_free(&wb);
	return status;
}
