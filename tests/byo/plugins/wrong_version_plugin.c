/* A plug-in built against an ABI version this ulpscope does not read. */
#include "plugin/ulpscope_plugin.h"

static const ulpscope_plugin_v1 plugin = {ULPSCOPE_PLUGIN_ABI_VERSION + 98u, "from the future", 0, NULL};

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &plugin; }
