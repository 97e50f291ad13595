/* Header check (e): a unit that sees only the declarations, linked with impl.c into one
   program (also compiled as C++ against the C-built implementation). */
#include "fuse.h"

#include "smoke.h"

int main(void) { return smoke(); }
