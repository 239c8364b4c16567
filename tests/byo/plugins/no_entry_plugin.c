/* A shared library without the entry point (its function has another name). */
#include "plugin/ulpscope_plugin.h"

static const ulpscope_plugin_v1 plugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "misnamed", 0, NULL};

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* get_plugin(void) { return &plugin; }
