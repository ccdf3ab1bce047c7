/* commands.c: the commands' table (cli.h), the one place that names every command: a new command is added here
 * and in a file of its own, and `pplab help` lists it. */
#include <string.h>

#include "cli.h"

const pp_cli_command *const pp__cli_commands[] = {&pp__cli_run,   &pp__cli_grade,   &pp__cli_info,
                                                  &pp__cli_train, &pp__cli_bench, &pp__cli_figures,
                                                  &pp__cli_similar, &pp__cli_grade_one};
const int pp__cli_ncommands = (int)(sizeof pp__cli_commands / sizeof pp__cli_commands[0]);

const pp_cli_command *pp__cli_command(const char *name) {
    for (int i = 0; name && i < pp__cli_ncommands; i++)
        if (!strcmp(name, pp__cli_commands[i]->name)) return pp__cli_commands[i];
    return NULL;
}
