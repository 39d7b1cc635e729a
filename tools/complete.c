/*
 * complete.c - attn-complete bash|zsh: write attn's shell completion,
 * generated from the table of options (options_info), so that a new
 * option, stage or format completes without anyone editing a script.
 * The build runs it (build/attn.bash, build/_attn) and make install puts
 * the scripts where bash-completion and zsh look.
 *
 * What completes: options (of attn, or of attn gen after the word gen),
 * their words (--like, --align, ..., -f's formats from the table of
 * formats), stage names for --stage (each piece of a comma-separated
 * list, and all), files for FILE arguments and operands, and gen, help,
 * workbench and softmax as the first word; after it, what that
 * subcommand takes (attn workbench: attn's options but those it
 * refuses; attn softmax: attn's, which its own rules then narrow; attn
 * help: its topics, from help.c's table).  Bash gets one function,
 * _attn, that needs nothing but bash itself (not the bash-completion
 * package); zsh gets an _arguments spec.
 */
#include <stdio.h>
#include <string.h>

#include "attn.h"
#include "help.h"
#include "options_table.h"

/* The commands whose options complete: attn, attn gen, attn workbench,
 * by the name of their bash functions. */
enum command { RUN, GEN, WORKBENCH };
static const char *const command_name[] = { "run", "gen", "workbench" };

/* Whether command c takes the option. */
static int
takes(const struct option_info *in, enum command c)
{
	return c == GEN ? in->gen : c == WORKBENCH ? in->workbench : in->attn;
}

/* The stage names --stage takes, space-separated, then "all". */
static void
put_stages(FILE *fp)
{
	size_t s;

	for (s = 0; s < ATTN_STAGE_COUNT; s++)
		if (!attn_stage_table[s].internal)
			fprintf(fp, "%s ", attn_stage_table[s].name);
	fputs("all", fp);
}

static void
put_words(FILE *fp, const char *const *w)
{
	size_t k;

	for (k = 0; w[k] != NULL; k++)
		fprintf(fp, "%s%s", k > 0 ? " " : "", w[k]);
}

/* The topics attn help takes, space-separated (help.c's table). */
static void
put_topics(FILE *fp)
{
	size_t i;

	for (i = 0; help_topic(i) != NULL; i++)
		fprintf(fp, "%s%s", i > 0 ? " " : "", help_topic(i));
}

/* The case patterns of option i's names: "-s|--stage". */
static void
put_names(FILE *fp, const struct option_info *in)
{
	if (in->letter != 0)
		fprintf(fp, "-%c|", in->letter);
	fprintf(fp, "--%s", in->name);
}

/* "_attn_values_CMD NAME CUR": what the argument of option NAME may be,
 * for command c; returns 1 when NAME takes no argument. */
static void
bash_values(FILE *fp, enum command c)
{
	struct option_info in;
	size_t i, n = options_count();

	fprintf(fp, "_attn_values_%s()\n{\n\tcase $1 in\n", command_name[c]);
	for (i = 0; i < n; i++) {
		options_info(i, &in);
		if (!takes(&in, c) || in.value == OPTION_NONE)
			continue;
		fputs("\t", fp);
		put_names(fp, &in);
		fputs(")\n\t\t", fp);
		switch (in.value) {
		case OPTION_WORDS:
			fputs("COMPREPLY=($(compgen -W '", fp);
			put_words(fp, in.words);
			fputs("' -- \"$2\")) ;;\n", fp);
			break;
		case OPTION_STAGES:
			fputs("_attn_list '", fp);
			put_stages(fp);
			fputs("' \"$2\" ;;\n", fp);
			break;
		case OPTION_FILE:
			fputs("_attn_files \"$2\" ;;\n", fp);
			break;
		case OPTION_TEXT:
		case OPTION_NONE:
			fputs("COMPREPLY=() ;;\n", fp);
			break;
		}
	}
	fputs("\t*)\n\t\treturn 1 ;;\n\tesac\n}\n\n", fp);
}

/* The options of command c, space-separated. */
static void
bash_options(FILE *fp, enum command c)
{
	struct option_info in;
	size_t i, n = options_count();
	const char *sep = "";

	for (i = 0; i < n; i++) {
		options_info(i, &in);
		if (!takes(&in, c))
			continue;
		if (in.letter != 0)
			fprintf(fp, "%s-%c", sep, in.letter);
		fprintf(fp, " --%s", in.name);
		sep = " ";
	}
}

static void
bash(FILE *fp)
{
	fputs("# bash completion for attn, generated from its table of "
	    "options by\n# attn-complete (tools/complete.c): do not edit.\n\n"
	    "# Files, directories with a slash.\n"
	    "_attn_files()\n{\n"
	    "\tcompopt -o filenames 2>/dev/null\n"
	    "\tCOMPREPLY=($(compgen -f -- \"$1\"))\n}\n\n"
	    "# WORDS for the last piece of a comma-separated list.\n"
	    "_attn_list()\n{\n"
	    "\tlocal head=\n"
	    "\t[[ $2 == *,* ]] && head=${2%,*},\n"
	    "\tCOMPREPLY=($(compgen -P \"$head\" -W \"$1\" -- \"${2##*,}\"))"
	    "\n}\n\n", fp);
	bash_values(fp, RUN);
	bash_values(fp, GEN);
	bash_values(fp, WORKBENCH);
	fputs("_attn()\n{\n"
	    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} cword=$COMP_CWORD\n"
	    "\tlocal prev= mode=run opts\n"
	    "\tif [[ ${COMP_WORDS[1]} == help ]]; then\n"
	    "\t\t(( cword == 2 )) && COMPREPLY=($(compgen -W '", fp);
	put_topics(fp);
	fputs("' -- \"$cur\"))\n"
	    "\t\treturn 0\n"
	    "\tfi\n"
	    "\tif (( cword > 1 )); then\n"
	    "\t\tcase ${COMP_WORDS[1]} in\n"
	    "\t\tgen | workbench) mode=${COMP_WORDS[1]} ;;\n"
	    "\t\tesac\n"
	    "\tfi\n"
	    "\tcase $mode in\n\tgen)\n\t\topts='", fp);
	bash_options(fp, GEN);
	fputs("' ;;\n\tworkbench)\n\t\topts='", fp);
	bash_options(fp, WORKBENCH);
	fputs("' ;;\n\t*)\n\t\topts='", fp);
	bash_options(fp, RUN);
	fputs("' ;;\n\tesac\n"
	    "\t# --name=value: bash splits it at the '=' (COMP_WORDBREAKS)\n"
	    "\tif [[ $cur == = ]]; then\n"
	    "\t\tprev=${COMP_WORDS[cword-1]} cur=\n"
	    "\telif (( cword > 1 )) && [[ ${COMP_WORDS[cword-1]} == = ]]; "
	    "then\n"
	    "\t\tprev=${COMP_WORDS[cword-2]}\n"
	    "\telif [[ $cur == --*=* ]]; then\n"
	    "\t\tprev=${cur%%=*} cur=${cur#*=}\n"
	    "\telif (( cword > 1 )); then\n"
	    "\t\tprev=${COMP_WORDS[cword-1]}\n"
	    "\tfi\n"
	    "\tif [[ $prev == -* ]] && _attn_values_$mode \"$prev\" "
	    "\"$cur\"; then\n"
	    "\t\treturn 0\n"
	    "\tfi\n"
	    "\tif [[ $cur == -* ]]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	    "\t\treturn 0\n"
	    "\tfi\n"
	    "\t[[ $mode == gen ]] && { COMPREPLY=(); return 0; }\n"
	    "\t_attn_files \"$cur\"\n"
	    "\t(( cword == 1 )) && for c in gen help workbench softmax; do\n"
	    "\t\t[[ $c == \"$cur\"* ]] && COMPREPLY+=(\"$c\")\n"
	    "\tdone\n"
	    "\treturn 0\n}\n\n"
	    "complete -F _attn attn\n", fp);
}

/* Help text inside an _arguments description: no [ ] : or quote. */
static void
zsh_text(FILE *fp, const char *s, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++) {
		if (strchr("[]:\\", s[k]) != NULL)
			putc('\\', fp);
		if (s[k] == '\'')
			fputs("'\\''", fp);
		else
			putc(s[k], fp);
	}
}

/* The _arguments specs of command c. */
static void
zsh_specs(FILE *fp, enum command c)
{
	struct option_info in;
	size_t i, n = options_count();

	for (i = 0; i < n; i++) {
		const char *eq = "";

		options_info(i, &in);
		if (!takes(&in, c))
			continue;
		if (in.value != OPTION_NONE)
			eq = "=";
		fputs("\t\t", fp);
		if (in.letter != 0)
			fprintf(fp, "'(-%c --%s)'{-%c%s,--%s%s}'[", in.letter,
			    in.name, in.letter, *eq ? "+" : "", in.name, eq);
		else
			fprintf(fp, "'--%s%s[", in.name, eq);
		zsh_text(fp, in.help, in.help_len);
		putc(']', fp);
		switch (in.value) {
		case OPTION_WORDS:
			fprintf(fp, ":%s:(", in.arg);
			put_words(fp, in.words);
			putc(')', fp);
			break;
		case OPTION_STAGES:
			fprintf(fp, ":%s:_sequence compadd - ", in.arg);
			put_stages(fp);
			break;
		case OPTION_FILE:
			fprintf(fp, ":%s:_files", in.arg);
			break;
		case OPTION_TEXT:
			fprintf(fp, ":%s: ", in.arg);
			break;
		case OPTION_NONE:
			break;
		}
		fputs("' \\\n", fp);
	}
}

static void
zsh(FILE *fp)
{
	fputs("#compdef attn\n# zsh completion for attn, generated from its "
	    "table of options by\n# attn-complete (tools/complete.c): do "
	    "not edit.\n\n"
	    "if [[ $words[2] == gen ]] && (( CURRENT > 2 )); then\n"
	    "\tshift words\n\t(( CURRENT-- ))\n"
	    "\t_arguments -s -S \\\n", fp);
	zsh_specs(fp, GEN);
	fputs("\t\t'1:ROWSxCOLS[xN..]: '\n"
	    "elif [[ $words[2] == help ]] && (( CURRENT == 3 )); then\n"
	    "\tcompadd -- ", fp);
	put_topics(fp);
	fputs("\n"
	    "elif [[ $words[2] == workbench ]] && (( CURRENT > 2 )); then\n"
	    "\tshift words\n\t(( CURRENT-- ))\n"
	    "\t_arguments -s -S \\\n", fp);
	zsh_specs(fp, WORKBENCH);
	fputs("\t\t'*:Q K V or BUNDLE:_files'\n"
	    "else\n"
	    "\t_arguments -s -S \\\n", fp);
	zsh_specs(fp, RUN);
	fputs("\t\t'1:Q, K, V or BUNDLE:{_alternative \"files:file:_files\" "
	    "\"commands:command:(gen help workbench softmax)\"}' \\\n"
	    "\t\t'*:file:_files'\n"
	    "fi\n", fp);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "bash") == 0)
		bash(stdout);
	else if (argc == 2 && strcmp(argv[1], "zsh") == 0)
		zsh(stdout);
	else {
		fputs("usage: attn-complete bash|zsh\n", stderr);
		return 64;
	}
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 74;
}
