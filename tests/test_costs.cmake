# Read by ctest after the discovered doctest cases (TEST_INCLUDE_FILES keeps the order they were
# added in): a COST for the longest of them, so that a fresh clone, which has no
# CTestCostData.txt, starts them first rather than in definition order, where one ran alone at
# the end (see cli.end_to_end in CMakeLists.txt). Release build, 2-core VM, 2026-12-05. ctest
# ignores a name that matches no test: rename here when a case is renamed.
set_tests_properties("run:run: every scenario in scenarios/ conserves bytes"  # about 35 s
                     PROPERTIES COST 150)
set_tests_properties("run:the expected tree DDP step matches the simulated one at 1k GPUs"  # 35 s
                     PROPERTIES COST 150)
