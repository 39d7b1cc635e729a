/*
 * main.c - attn: its command line (command.c).
 */
#include "command.h"

int
main(int argc, char **argv)
{
	return command_main(argc, argv);
}
