# gpuprobe build.
#
# One source tree, four variants, each in its own folder so they never mix:
#   build/release  the shipped binary (`make`)
#   build/test     the same plus the test-only job kinds (tests/kinds/)
#   build/asan     the test variant under AddressSanitizer + UBSan
#   build/dist     the release binary linked with an $ORIGIN rpath, for `make dist`
# A variant is built by re-invoking make with VARIANT set; the rules below
# the variant section only ever see one variant at a time.

VERSION  := $(shell cat VERSION)
GITREV   := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
CC       ?= gcc
VARIANT  ?= release
B        := build/$(VARIANT)

DEB_PACKAGES      := gcc make binutils libmicrohttpd-dev libjansson-dev libsqlite3-dev \
                     nettle-dev libcurl4-openssl-dev libcmocka-dev curl jq sqlite3 procps \
                     libjs-chart.js
# The Slurm fan-out's test (tests/integration/t_slurm.sh) runs a real
# single-node Slurm on loopback.
DEB_TEST_PACKAGES  := slurmctld slurmd slurm-client munge
DEB_BENCH_PACKAGES := wrk nginx-light
# The browser test: Debian's chromium driven by playwright-core (tests/web/).
# Node and npm come from Debian unless the machine has its own (NodeSource's
# nodejs carries npm and conflicts with Debian's npm package).
DEB_WEB_PACKAGES   := chromium
# The /metrics test (tests/integration/t_metrics.sh): promtool lints the page
# and a real Prometheus scrapes it; Debian's prometheus package has both. On a
# machine with systemd, installing it also starts its own service on :9090.
DEB_TEST_PACKAGES  += prometheus
# Hardening: t_tls makes its certificates with openssl, t_slowloris
# drives its slow clients from python3, and tests/systemd/check.sh runs
# systemd-analyze verify and security on the unit.
DEB_TEST_PACKAGES  += openssl python3 systemd
DEB_FUZZ_PACKAGES  := clang libclang-rt-dev

CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wformat=2 \
                 -Wstrict-prototypes -Wmissing-prototypes -Wvla -g -I. -I$(B) -MMD -MP \
                 -DGPUPROBE_VERSION='"$(VERSION)"' -DGPUPROBE_GITREV='"$(GITREV)"'
LDLIBS := -lmicrohttpd -ljansson -lsqlite3 -lnettle -lcurl -ldl -lpthread -lm

ifeq ($(VARIANT),release)
  VCFLAGS := -O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong
else ifeq ($(VARIANT),dist)
  VCFLAGS := -O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong
  # DT_RPATH (not RUNPATH) so the bundled libraries' own dependencies are
  # found in lib/ too, not only the binary's direct ones.
  VLDFLAGS := -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib'
else ifeq ($(VARIANT),test)
  VCFLAGS := -O1 -DGPUPROBE_TEST_BUILD
  TEST_KINDS := 1
else ifeq ($(VARIANT),asan)
  SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
  VCFLAGS := -O1 -DGPUPROBE_TEST_BUILD $(SAN)
  VLDFLAGS := $(SAN)
  TEST_KINDS := 1
else
  $(error unknown VARIANT $(VARIANT))
endif

CFLAGS  := $(CFLAGS_COMMON) $(VCFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(VLDFLAGS) $(EXTRA_LDFLAGS)

# Library code: everything but the entry point, so unit tests link the same objects.
LIB_SRC := $(wildcard util/*.c db/*.c probes/*.c probes/*/*.c trace/*.c cache/*.c model/*.c fleet/*.c) \
           $(filter-out server/cli/main.c,$(wildcard server/*.c server/*/*.c))
ifdef TEST_KINDS
LIB_SRC += $(wildcard tests/kinds/*.c)
endif
# The dashboard's script, /app.js, is one file built from Debian's Chart.js
# (libjs-chart.js, never copied into this tree) and web/js/*.js in the order
# below, wrapped in one strict-mode function: the daemon serves the dashboard
# at fixed paths (server/api/routes.c), and one script needs no loader.
CHARTJS  := /usr/share/javascript/chart.js/chart.min.js
WEB_JS   := web/js/util.js web/js/charts.js web/js/overview.js web/js/device.js \
            web/js/results_tables.js web/js/results_charts.js web/js/compare_tables.js web/js/compare.js \
            web/js/occupancy.js web/js/predict.js web/js/traces.js web/js/fleet.js \
            web/js/fleet_distribution.js web/js/main.js
WEB_APP  := $(B)/web/app.js
ASSETS   := $(sort $(wildcard web/*.html web/*.css web/*.json web/*.svg)) $(WEB_APP)
REFERENCE := $(sort $(wildcard data/reference/*.json))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o) $(B)/assets.o $(B)/assets_blob.o \
            $(B)/reference.o $(B)/reference_blob.o
MAIN_OBJ := $(B)/server/cli/main.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_SUPPORT := $(patsubst %.c,$(B)/%.o,$(wildcard tests/unit/support/*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

.PHONY: all build variant deps test-deps bench-deps web-deps apt-node apt-npm fuzz-deps run test check check-build unit unit-run integration \
        dist gpu-check install systemd-check bench bench-trace bench-cache bench-fleet fuzz fmt clean

all: build
build:
	@$(MAKE) --no-print-directory variant VARIANT=release

variant: $(B)/gpuprobe

$(B)/gpuprobe: $(MAIN_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(LDFLAGS) $(LDLIBS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# util/version.c holds the commit it was built from (gpuprobe --version, the
# provenance of every stored result): rebuild it whenever HEAD moves, which
# a flag alone would not trigger. The stamp is rewritten only when it changes.
$(B)/gitrev: FORCE
	@mkdir -p $(B); echo '$(GITREV)' | cmp -s - $@ || echo '$(GITREV)' > $@
$(B)/util/version.o: $(B)/gitrev
.PHONY: FORCE
FORCE:

# Files linked into the binary, so a deployed gpuprobe is one file plus its
# libraries: the dashboard and the OpenAPI document (web/, and /app.js built
# in $(B)/web/; each served at /NAME) and the reference result bundles
# (data/reference/, imported by serve).
# $(call embed_table,HEADER,STRUCT,TABLE,FILES,DIR,URLPREFIX) writes the C
# table of FILES, each named URLPREFIX + its path below DIR (a shell pattern).
define embed_table
	@mkdir -p $(B)
	@{ echo '/* generated by the Makefile */'; \
	   echo '#include "$(1)"'; \
	   for f in $(4); do s=$$(echo "$$f" | tr -c 'A-Za-z0-9\n' '_'); \
	     echo "extern const unsigned char _binary_$${s}_start[], _binary_$${s}_end[];"; done; \
	   echo 'const struct $(2) $(3)[] = {'; \
	   for f in $(4); do s=$$(echo "$$f" | tr -c 'A-Za-z0-9\n' '_'); n=$${f#$(5)}; \
	     echo "  { \"$(6)$$n\", _binary_$${s}_start, _binary_$${s}_end },"; done; \
	   echo '  { 0, 0, 0 }'; echo '};'; } > $@
endef

$(B)/%_blob.o:
	@mkdir -p $(B)
	ld -r -b binary -z noexecstack -o $@ $^

$(B)/assets_blob.o: $(ASSETS)
$(B)/reference_blob.o: $(REFERENCE)

$(WEB_APP): $(CHARTJS) $(WEB_JS) Makefile
	@mkdir -p $(dir $@)
	@{ cat $(CHARTJS); echo; echo '/* gpuprobe dashboard: web/js/, bundled by the Makefile */'; \
	   echo '(function () {'; echo "'use strict';"; \
	   for f in $(WEB_JS); do echo "/* ---- $$f */"; cat "$$f"; done; \
	   echo '})();'; } > $@.tmp && mv $@.tmp $@

$(CHARTJS):
	@echo "$@ is missing: the dashboard embeds Debian's Chart.js; run 'make deps' (apt-get install libjs-chart.js)" >&2
	@exit 1

$(B)/assets.c: $(ASSETS) Makefile
	$(call embed_table,server/api/assets.h,asset,assets,$(ASSETS),*web/,/)

$(B)/reference.c: $(REFERENCE) Makefile
	$(call embed_table,server/bundles/reference.h,embedded_bundle,reference_bundles,$(REFERENCE),data/reference/,)

$(B)/assets.o $(B)/reference.o: $(B)/%.o: $(B)/%.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/tests/%: tests/unit/%.c $(LIB_OBJ) $(UNIT_SUPPORT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(LDLIBS) -lcmocka

# The synthetic fleet of the fleet benchmark and tests (bench/fleet/synth.c).
FLEET_SYNTH := $(B)/bench/fleet-synth
$(FLEET_SYNTH): bench/fleet/synth.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(LDLIBS)

# ---- set-up -------------------------------------------------------------
# Installs only what is missing; a machine that has everything is not touched.
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(DEB_PACKAGES))
test-deps:
	$(call apt_install,$(DEB_TEST_PACKAGES))
bench-deps:
	$(call apt_install,$(DEB_BENCH_PACKAGES))
# npm ci only when tests/web/node_modules lacks the locked playwright-core.
export PLAYWRIGHT_INSTALLED := const l = require("./package-lock.json").packages["node_modules/playwright-core"]; \
  process.exit(require("./node_modules/playwright-core/package.json").version === l.version ? 0 : 1)
web-deps:
	$(call apt_install,$(DEB_WEB_PACKAGES))
	@command -v node >/dev/null || { $(MAKE) --no-print-directory apt-node; }
	@command -v npm >/dev/null || { $(MAKE) --no-print-directory apt-npm; }
	@cd tests/web && node -e "$$PLAYWRIGHT_INSTALLED" 2>/dev/null || npm ci --no-audit --no-fund --loglevel=error
apt-node:
	$(call apt_install,nodejs)
apt-npm:
	$(call apt_install,npm)
fuzz-deps:
	$(call apt_install,$(DEB_FUZZ_PACKAGES))

# ---- use ----------------------------------------------------------------
# `make run PORT=9000`, or LISTEN=0.0.0.0:9000 to serve beyond this machine.
PORT   ?= 8080
LISTEN ?= 127.0.0.1:$(PORT)
run: deps build
	@mkdir -p var
	@test -s var/tokens || { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > var/tokens; echo >> var/tokens; chmod 600 var/tokens; }
	@echo "write token (var/tokens): $$(head -n1 var/tokens)"
	build/release/gpuprobe serve --listen $(LISTEN) --db var/gpuprobe.db --token-file var/tokens

# ---- tests --------------------------------------------------------------
# Everything the checks run is compiled first, on every core: compiling
# four variants one file at a time was a fifth of the run. The checks
# themselves stay one at a time (their daemons' timings are part of what
# they test).
JOBS := $(shell nproc 2>/dev/null || echo 1)
test: deps test-deps web-deps
	@$(MAKE) --no-print-directory -j$(JOBS) variant VARIANT=release
	@$(MAKE) --no-print-directory -j$(JOBS) check-build VARIANT=test
	@$(MAKE) --no-print-directory -j$(JOBS) check-build VARIANT=asan
	@$(MAKE) --no-print-directory -j$(JOBS) variant VARIANT=dist
	@$(MAKE) --no-print-directory check VARIANT=test
	@$(MAKE) --no-print-directory check VARIANT=asan
	@$(MAKE) --no-print-directory dist-check
	@$(MAKE) --no-print-directory systemd-check

check-build: $(B)/gpuprobe $(UNIT_BIN) $(FLEET_SYNTH)

check: check-build
	@echo "== unit tests ($(VARIANT))"
	@set -e; for t in $(UNIT_BIN); do echo "-- $$t"; ASAN_OPTIONS=detect_leaks=1 $$t; done
	@echo "== integration tests ($(VARIANT))"
	@tests/integration/run.sh $(B)/gpuprobe

# The unit tests need the test build (it has the test job kind): `make unit`
# builds that unless VARIANT is given.
unit:
	@$(MAKE) --no-print-directory unit-run \
	    VARIANT=$(if $(filter command line,$(origin VARIANT)),$(VARIANT),test)

unit-run: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do $$t; done

# ---- installing as a systemd service -------------------------------------
# `make install [DESTDIR=D] [PREFIX=/usr/local]`: the user, the binary, the
# configuration and tokens (kept when present), the unit (systemd/install.sh,
# safe to run again). systemd-check verifies the unit, holds its exposure
# to 2.0 or less, and installs twice into a DESTDIR.
install: build
	@DESTDIR="$(DESTDIR)" PREFIX="$(or $(PREFIX),/usr/local)" systemd/install.sh build/release/gpuprobe

systemd-check: build
	@tests/systemd/check.sh build/release/gpuprobe

# ---- distribution -------------------------------------------------------
DIST_NAME := gpuprobe-$(VERSION)-linux-$(shell uname -m)
dist:
	@$(MAKE) --no-print-directory variant VARIANT=dist
	@tests/dist/bundle.sh build/dist/gpuprobe $(DIST_NAME) dist

dist-check: dist
	@tests/dist/check.sh dist/$(DIST_NAME).tar.gz

# ---- GPU machine --------------------------------------------------------
gpu-check:
	@tests/gpu/run.sh

# libFuzzer over every trace reader, FUZZ_SECONDS each (default 300), with the
# committed corpus in tests/fuzz/corpus/.
fuzz: deps fuzz-deps
	@tests/fuzz/run.sh

bench: deps bench-deps build
	@bench/http/run.sh build/release/gpuprobe

# A central taking a simulated fleet of 10,000 GPUs (needs ~8 GB free).
bench-fleet: deps
	@$(MAKE) --no-print-directory variant VARIANT=release
	@$(MAKE) --no-print-directory build/release/bench/fleet-synth VARIANT=release
	@bench/fleet/run.sh build/release/gpuprobe build/release/bench/fleet-synth

# The trace sorter on generated 10M and 100M-record traces (needs ~5 GB free).
bench-trace: deps
	@bench/trace/run.sh

# The cache model's engines against the sorter alone (bench/cache/RESULTS.md).
bench-cache: deps
	@bench/cache/run.sh

fmt:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build dist

-include $(shell find build -name '*.d' 2>/dev/null)
