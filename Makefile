# Basin's entry points. Each target installs what is missing first (scripts/setup.sh).
#   make          build build/basin and the tests
#   make demo     build, then run the demo (scripts/demo.sh)
#   make test     build, then run every test suite (what CI runs)
#   make test-fast   as test, skipping suites labelled "slow" and the fuzzers (not in CI)
#   make asan     build with ASan+UBSan in build-asan/ and run the tests there
#   make fuzz     build the libFuzzer targets with clang and run each for FUZZ_SECONDS
#   make bench    build and run the benchmarks in bench/
JOBS ?= 2
BUILD ?= build
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=
TARGET ?= all

.PHONY: all setup build demo test test-fast asan fuzz bench format tidy clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/.duckdb-root: scripts/setup.sh
	@mkdir -p $(BUILD)
	@bash scripts/setup.sh --print-duckdb-root | tail -n 1 > $@.tmp && mv $@.tmp $@
	@bash scripts/setup.sh --print-duckdb-headers | tail -n 1 > $(BUILD)/.duckdb-headers

build: $(BUILD)/.duckdb-root
	@bash scripts/setup.sh
	cmake -S . -B $(BUILD) -G Ninja -DDUCKDB_ROOT="$$(cat $(BUILD)/.duckdb-root)" \
	  -DDUCKDB_CXX_INCLUDE_DIR="$$(cat $(BUILD)/.duckdb-headers)" $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target $(TARGET)

# The demo needs only the basin binary: no tests, benchmarks or fuzzers.
demo:
	@$(MAKE) --no-print-directory build TARGET=basin
	@bash scripts/demo.sh $(BUILD)/basin

test: build
	bash scripts/run_tests.sh $(BUILD)

test-fast: build
	BASIN_SKIP_SLOW=1 bash scripts/run_tests.sh $(BUILD)

asan:
	$(MAKE) build BUILD=build-asan CMAKE_FLAGS="-DBASIN_SANITIZE=ON -DBASIN_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug"
	BASIN_SANITIZE=1 BASIN_SKIP_FUZZ=1 bash scripts/run_tests.sh build-asan

BUILD_FUZZ ?= build-fuzz
fuzz:
	$(MAKE) build BUILD=$(BUILD_FUZZ) TARGET=fuzzers CMAKE_FLAGS="-DBASIN_FUZZ=ON -DBASIN_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++"
	bash scripts/run_fuzzers.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

bench: build
	@bash scripts/setup.sh --bench
	bash scripts/run_benchmarks.sh $(BUILD)

format:
	find src tests bench fuzz include -name '*.h' -o -name '*.cc' | xargs clang-format -i

tidy: build
	find src -name '*.cc' | xargs clang-tidy -p $(BUILD) --quiet

clean:
	rm -rf build build-asan build-fuzz
