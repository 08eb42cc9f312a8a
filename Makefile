# Thin front door: `make demo` and `make test` set up, build and run.
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
# tests at once: a second fills the first's idle time (process start-up,
# mpirun, files); more would crowd each test's StarPU workers on small machines
TEST_JOBS ?= 2
PREFIX ?= /usr/local
# The StarPU scripts/starpu.sh builds once per machine (scripts/deps.sh runs it);
# a build folder configured before it existed is configured again.
STARPU_STAMP := $(shell scripts/starpu.sh --prefix)/.wsisa-stamp

.PHONY: all deps build demo test install asan clean

all: build

deps:
	@scripts/deps.sh

$(STARPU_STAMP):
	@scripts/deps.sh

$(BUILD)/CMakeCache.txt: $(STARPU_STAMP) | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest -j $(TEST_JOBS) --output-on-failure

# PREFIX/bin/wsisa, PREFIX/bin/wsisa-bench and the sample in PREFIX/share/wsisa
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Asan $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure

clean:
	rm -rf $(BUILD) build-asan
