/* cmd_info.c: `pplab info`: what was compiled in and whether it works on this machine. */
#include <stdio.h>

#include "cli.h"
#include "transport.h"

int pp__cmd_info(int argc, char **argv) {
    printf("pplab %s\n", pp_version());
    printf("backends:\n");
    pp__backend_describe_all(stdout);
    printf("transports:\n");
    pp__transport_describe_all(stdout);
    return 0;
}
