# nfpark — the two commands a newcomer needs:
#   make demo   install what is missing, build, and run the PayloadPark demo
#   make test   install what is missing, build, and run every test (unit, sanitizers, Python, e2e)
.PHONY: demo test build setup unit asan pytest e2e bench format clean dissector

setup:
	@scripts/setup.sh

build: setup

demo: setup
	@PYTHONPATH=python .venv/bin/python -m nfpark demo

# The test command builds what its tests run (unit tests, fuzz replays, nfpark), not the benches.
test:
	@NFPARK_BUILD_TARGET=nfpark_test_build scripts/setup.sh
	@scripts/test.sh

bench: setup
	@scripts/bench.sh

dissector:
	@PYTHONPATH=python python3 -m nfpark dissector install

format:
	@clang-format -i $$(git ls-files 'src/*.h' 'src/*.cc' 'apps/*.cc' 'apps/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc')

clean:
	rm -rf build build-asan
