// NoEntryPoint: a shared library that is not a Loupe plugin (for the :load-pass error test).
extern "C" int not_a_plugin() { return 42; }
