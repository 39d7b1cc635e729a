/*
 * command.h - attn's command line, parsed and run: what main() does.
 */
#ifndef ATTN_COMMAND_H
#define ATTN_COMMAND_H

/* Parse argv's options and run the command they name (help, gen,
 * workbench, or attn's run); returns the exit code attn(1) gives. */
int command_main(int argc, char **argv);

#endif
