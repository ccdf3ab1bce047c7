# pplab: a lab kit for pipeline-parallel training. `make help` lists the targets and knobs.

CC       ?= cc
BUILD    ?= build
CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda) /usr)

WARN     := -Wall -Wextra -Werror -Wpointer-arith -Wno-unused-parameter -Wno-format-truncation
CSTD     := -std=c11 -D_GNU_SOURCE
OPT      ?= -O2 -g
# base/ is everyone's ground floor: status codes and the fatal path, text made safe to show, hashing, the layout
# of a message tag; it includes nothing of the kit's, so that every room may stand on it
BASE_INC := -Ibase
# sandbox/ is the trust boundary's trusted machinery: proto (linked into both processes), host (the trusted end of a
# driver), policy (what a jailed process may do), toolchain (the lab build: compiler, tokens, object rules). The
# program that holds student code is driver/, a room of its own above pp.h (below)
SANDBOX_INC := -Isandbox/proto -Isandbox/host -Isandbox/policy
# lib/ in rooms, from the ground up: schedule (the table, placement, the answers, pp_tag), model
# (tensors, backends, the model and pp.h's compute calls), transport (pp.h's messages and reduces, the transports),
# run (configuration, ranks, the runtime, results, the rank server); pp.h, the public header, above them all
LIB_ROOMS := schedule model transport run
LIB_INC := -Ilib $(addprefix -Ilib/,$(LIB_ROOMS))
CFLAGS_BASE := $(CSTD) $(OPT) $(WARN) -fPIC -pthread $(BASE_INC) $(LIB_INC) -Ikernels $(SANDBOX_INC)
LDLIBS_BASE := -lm -lpthread -ldl

ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
BUILD    := build-asan
endif
# make fuzz: the kit's code built by clang for libFuzzer, with ASan and UBSan, in a build folder of its own; the
# CPU backend and the threads transport alone (what the fuzz targets reach)
ifeq ($(FUZZ),1)
CC       := clang
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
            -Wno-unknown-warning-option -Wno-missing-field-initializers -Wno-bitwise-instead-of-logical
BUILD    := build-fuzz
NO_CUDA  := 1
NO_MPI   := 1
endif

# ---- detection: each probe runs a command, and says what it found --------------------------------------
have = $(if $(shell $(1) >/dev/null 2>&1 && echo y),1,0)

# pkg-config probes say nothing: what is missing is said once, by the $(error) below or by scripts/deps.sh
HAVE_OPENBLAS  := $(call have,pkg-config --exists openblas)
HAVE_CJSON     := $(call have,pkg-config --exists libcjson)
HAVE_CRITERION := $(call have,pkg-config --exists criterion)
HAVE_SECCOMP   := $(call have,pkg-config --exists libseccomp)
HAVE_SODIUM    := $(call have,pkg-config --exists libsodium)
HAVE_GNUPLOT   := $(call have,command -v gnuplot)
HAVE_GLPK      := $(call have,test -f /usr/include/glpk.h)
HAVE_MPI       := $(if $(NO_MPI),0,$(if $(wildcard lib/transport/mpi.c),$(call have,command -v mpicc),0))
HAVE_NVCC      := $(if $(NO_CUDA),0,$(call have,test -x $(CUDA_HOME)/bin/nvcc))
HAVE_CUBLAS    := $(if $(filter 1,$(HAVE_NVCC)),$(call have,test -f $(CUDA_HOME)/include/cublas_v2.h),0)
HAVE_NCCL      := $(if $(NO_NCCL),0,$(if $(filter 1,$(HAVE_NVCC)),$(call have,test -f $(CUDA_HOME)/include/nccl.h -o -f /usr/include/nccl.h),0))
# The CUDA backend needs both the compiler and cuBLAS.
HAVE_CUDA      := $(if $(filter 11,$(HAVE_NVCC)$(HAVE_CUBLAS)),1,0)

# `make test`, `make demo` and `make deps` install what is missing first, so they must parse without it.
ifeq ($(filter deps test check check-long check-hosts check-slurm demo clean help answer-files,$(MAKECMDGOALS)),)
ifneq ($(HAVE_OPENBLAS),1)
$(error OpenBLAS not found: install it with 'apt-get install libopenblas-dev' (or run make deps))
endif
ifneq ($(HAVE_CJSON),1)
$(error cJSON not found: install it with 'apt-get install libcjson-dev' (or run make deps))
endif
ifneq ($(HAVE_SECCOMP),1)
$(error libseccomp not found: install it with 'apt-get install libseccomp-dev' (or run make deps))
endif
ifneq ($(HAVE_SODIUM),1)
$(error libsodium not found: install it with 'apt-get install libsodium-dev' (or run make deps))
endif
endif

pc = $(shell pkg-config $(1) 2>/dev/null)
BLAS_CFLAGS := $(call pc,--cflags openblas)
BLAS_LIBS   := $(call pc,--libs openblas)
CJSON_CFLAGS := $(call pc,--cflags libcjson)
CJSON_LIBS   := $(call pc,--libs libcjson)
# the grader's keyed hashes (the warm-up's draw): libsodium's HMAC-SHA-256
GRADER_LIBS  := $(CJSON_LIBS) $(call pc,--libs libsodium)
# lab 09's optimum (grader/theory/sched_ilp.c, the kit's alone) is GLPK's integer program; without GLPK,
# sched_ilp_absent.c says there is none (a handout has neither: both are answer files, below)
ifeq ($(HAVE_GLPK)$(if $(wildcard grader/theory/sched_ilp.c),1,0),11)
GRADER_LIBS  += -lglpk
ILP_OFF      := grader/theory/sched_ilp_absent.c
else
ILP_OFF      := grader/theory/sched_ilp.c
endif
# the fuzz target of the JUnit report parses what it wrote with libxml2
XML_CFLAGS   := $(call pc,--cflags libxml-2.0)
SECCOMP_LIBS := $(call pc,--libs libseccomp)
SECCOMP_STATIC := $(call pc,--libs --static libseccomp)

CFLAGS := $(CFLAGS_BASE) $(SANFLAGS) $(BLAS_CFLAGS) $(CFLAGS)
LIB_LDLIBS := $(BLAS_LIBS) $(SECCOMP_LIBS) $(LDLIBS_BASE)

# ---- answers: what the labs grade -----------------------------------------------------------------------
# The kit computes every answer: the schedules' canonical orders, peaks and bubbles, the placements, the library's
# own tensor-parallel block (lib/schedule/canonical.c and answers_generated.c, behind lib/schedule/answers.h), the
# order interpreter of pplab run --order and the warm-up's keys (grader/grade/order_interp.c and warmup_keys.c). A
# student handout has none of those files: it builds the recorded column, which reads what the kit recorded for the
# handout's public configurations (lib/schedule/answers.rec, written by make answers) and computes nothing. The
# column is chosen here and nowhere else; `make ANSWERS=recorded` builds a kit as its handout would (in
# build-recorded/).
ANSWERS_generated := lib/schedule/canonical.c lib/schedule/answers_generated.c grader/grade/warmup_keys.c \
                     grader/grade/order_interp.c grader/theory/sched_refs.c grader/theory/sched_greedy.c \
                     grader/theory/sched_ilp.c grader/theory/sched_ilp_absent.c
ANSWERS_recorded  := lib/schedule/answers_recorded.c grader/grade/warmup_recorded.c grader/grade/order_interp_absent.c \
                     grader/theory/sched_refs_recorded.c
# the generators' own headers, which only the kit's answer files include, and lab 09's recorded optima
ANSWERS_private   := lib/schedule/canonical.h grader/theory/sched_kit.h grader/theory/sched_optima.rec
HAVE_GENERATORS := $(if $(wildcard lib/schedule/canonical.c),1,0)
ANSWERS ?= $(if $(filter 1,$(HAVE_GENERATORS)),generated,recorded)
ifeq ($(filter generated recorded,$(ANSWERS)),)
$(error ANSWERS=$(ANSWERS): use generated (the kit's) or recorded (a handout's))
endif
ifeq ($(ANSWERS)$(HAVE_GENERATORS),generated0)
$(error ANSWERS=generated needs the kit's generators, which a handout does not have)
endif
ifeq ($(ANSWERS)$(HAVE_GENERATORS),recorded1)
BUILD := build-recorded
endif
ANSWERS_OFF := $(ANSWERS_$(if $(filter generated,$(ANSWERS)),recorded,generated))

# ---- sources -------------------------------------------------------------------------------------------
# the transports beyond threads are built only where their library is (below)
# (the mpi transport is mpi.c and its mpi_*.c, beside the NCCL groups it sets up)
MPI_SRC  := $(wildcard lib/transport/mpi.c lib/transport/mpi_*.c) lib/transport/nccl_groups.c
LIB_SRC  := $(wildcard base/*.c) \
            $(filter-out $(MPI_SRC) $(ANSWERS_OFF),$(wildcard $(addsuffix /*.c,$(addprefix lib/,$(LIB_ROOMS))))) \
            $(wildcard kernels/cpu/*.c) \
            $(wildcard sandbox/proto/*.c sandbox/host/*.c sandbox/policy/*.c)
# The schedule driver (driver/): the one program that loads a student's object, one process per rank, the same for
# every submission. Static (it starts in an empty root), never built with a sanitizer (ASan refuses address-space
# limits, LSan fails under seccomp), never with CUDA or MPI. A second implementation of pp.h, it sees of lib/ that
# header alone (-Ilib, no room of lib's), and links what it shares with pplab: the protocol, the filter, base/'s
# tag layout. Its objects are a compilation of their own, in obj-driver/.
DRIVER_SRC := $(wildcard driver/*.c) sandbox/proto/chan.c sandbox/proto/wire.c sandbox/proto/crash.c \
              sandbox/proto/warmup_call.c sandbox/proto/grid_call.c sandbox/proto/elfrules.c sandbox/policy/filter.c base/tag.c
DRIVER_OBJ := $(patsubst %.c,$(BUILD)/obj-driver/%.o,$(DRIVER_SRC))
DRIVER_CFLAGS := $(CSTD) -O2 -g $(WARN) -pthread $(BASE_INC) -Ilib -Isandbox/proto -Isandbox/policy -Idriver
CUDA_SRC := $(wildcard kernels/cuda/*.cu)

ifeq ($(HAVE_CUDA),1)
NVCC        := $(CUDA_HOME)/bin/nvcc
NVCCFLAGS   := -O2 -std=c++20 -Xcompiler -fPIC,-Wall,-Wextra,-Werror,-Wno-unused-parameter $(BASE_INC) $(LIB_INC) -Ikernels -Isandbox/proto \
               --expt-relaxed-constexpr -Werror all-warnings \
               -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
               -gencode arch=compute_90,code=compute_90
CFLAGS      += -DPP_HAVE_CUDA -I$(CUDA_HOME)/include
# CUDA's libraries are linked into the plugin alone (lib/model/plugin.h): a process maps them only once it uses a GPU
CUDA_LDLIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lstdc++
ifeq ($(HAVE_NCCL),1)
CFLAGS      += -DPP_HAVE_NCCL
NVCCFLAGS   += -DPP_HAVE_NCCL
CUDA_LDLIBS += -lnccl
CUDA_SRC    += lib/transport/nccl.cu
endif
# .cu.o: kernels/cuda mirrors kernels/cpu file by file, and libpp.a must not see two members named gemm.o
LIB_CUDA_OBJ := $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(CUDA_SRC))
PLUGIN       := $(BUILD)/libpp_cuda.so
endif

ifeq ($(HAVE_MPI),1)
MPI_CFLAGS := $(shell mpicc --showme:compile)
MPI_LIBS   := $(shell mpicc --showme:link)
LIB_SRC    += $(MPI_SRC)
CFLAGS     += -DPP_HAVE_MPI
LIB_LDLIBS += $(MPI_LIBS)
$(patsubst %.c,$(BUILD)/obj/%.o,$(MPI_SRC)): CFLAGS += $(MPI_CFLAGS)
$(BUILD)/obj/lib/transport/transport.o: CFLAGS += $(MPI_CFLAGS)
endif

LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC))

# Objects depend on the flags they were built with, so `make NO_CUDA=1` after `make` rebuilds what changed.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW   := $(CC) $(CFLAGS) $(NVCCFLAGS) $(LIB_LDLIBS) $(CUDA_LDLIBS)
# build/ is private from its start: as root, pplab grade would make it so (and say so) on a student's first grade
$(shell mkdir -p -m 0700 $(BUILD); echo '$(FLAGS_NOW)' | cmp -s - $(FLAGS_STAMP) || echo '$(FLAGS_NOW)' > $(FLAGS_STAMP))

# grader/ in rooms, in the order data flows: cli (commands, flags) -> grade (build, run, check) -> theory (the
# canonical replay) -> report (terminal, JSON, JUnit, Gradescope) and view (timelines, plots, figures)
GRADER_ROOMS := cli grade theory report view
GRADER_INC := $(addprefix -Igrader/,$(GRADER_ROOMS)) -Isandbox/toolchain
CLI_SRC  := $(filter-out $(ANSWERS_OFF) $(ILP_OFF),$(foreach r,$(GRADER_ROOMS),$(wildcard grader/$(r)/*.c))) \
            $(wildcard sandbox/toolchain/*.c) $(wildcard bench/*.c)
CLI_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC))
$(CLI_OBJ): CFLAGS += $(CJSON_CFLAGS) $(GRADER_INC)

TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# the fuzz targets (tests/fuzz/fuzz_NAME.c): with libFuzzer for make fuzz, with a replay main for make test
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_LINK = $(filter-out $(BUILD)/obj/grader/cli/main.o,$(CLI_OBJ)) $(LIB_OBJ) $(GRADER_LIBS) $(LIB_LDLIBS) -lxml2
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
REPLAY_BIN := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/fuzz/%,$(FUZZ_SRC))
# The long ones, which make check runs after make test's: the fp32 tolerance sweep at M = 1024, the handout's
# round trip and its answers, the MPI suite, the benchmarks' own test, the jail as a normal user, the Gradescope
# autograder, the CI templates as GitHub and GitLab run them, the container of the Dockerfile built and used.
SLOW_TESTS := test_sweeps test_tolerance test_sched_record test_handout test_mpi test_bench test_jail_user test_autograder test_ci \
              test_container
SLOW_BIN := $(filter $(addprefix $(BUILD)/tests/,$(SLOW_TESTS)),$(TEST_BIN))
# Of those, the ones that build and grade trees of their own with make (the handout, Gradescope's zip, the CI
# templates' repositories, the container's image): they run after the others, whose MPI deadlines their builds would
# crowd out of the cores, and make asan leaves them out, since under it they would sanitize their harness alone.
TREE_TESTS := test_handout test_autograder test_ci test_container
TREE_BIN := $(filter $(addprefix $(BUILD)/tests/,$(TREE_TESTS)),$(SLOW_BIN))
# The suites that need a machine of their own making (as root): make check-hosts makes hosts (network
# namespaces) and runs test_hosts on them, make check-slurm starts a Slurm cluster and runs test_slurm.
HOSTS_BIN := $(BUILD)/tests/test_hosts
SLURM_BIN := $(BUILD)/tests/test_slurm
QUICK_BIN := $(filter-out $(SLOW_BIN) $(HOSTS_BIN) $(SLURM_BIN),$(TEST_BIN))


# Short lines unless V=1.
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-5s %s\n' '$(1)' '$(2)'
endif
DEPFLAGS = -MMD -MP
# The targets that build before they run (test, check-long, demo, asan, and `make` itself) build on every core,
# unless make was given -j itself (then its job server decides). $(MAKE) stays on the recipe lines, where make
# looks for it to hand its job server down.
NPROC := $(shell nproc 2>/dev/null || echo 2)
JOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(NPROC))

.PHONY: all build info help test check check-long check-hosts check-slurm unit selfcheck demo grade plots handout autograder answers answer-files optima asan fuzz fuzz-targets bench clean deps
# `make` says what it found; the other targets build quietly
all:
	@$(MAKE) --no-print-directory info
	@$(MAKE) --no-print-directory $(JOBS) build
build: $(BUILD)/libpp.so $(BUILD)/libpp.a $(BUILD)/pplab-driver $(BUILD)/pplab $(PLUGIN)

# A handout has no solutions/: its help lists what works there, in its words.
KIT := $(if $(wildcard solutions/*/*.c),1,)
help:
	@echo "pplab: a lab kit for pipeline-parallel training"
	@echo "  make               build build/pplab, build/pplab-driver, build/libpp.so and build/libpp.a; say what was found"
ifeq ($(KIT),1)
	@echo "  make demo          install missing Debian packages, build, grade the reference solutions, draw timelines,"
	@echo "                     train the kit's model on Shakespeare's plays for a minute"
	@echo "  make test          the quick unit suites and the grader's self-check, about a minute on 2 cores (each part timed)"
	@echo "  make check         make test, then make check-long: the long suites (valid-variant and determinism sweeps, tolerance,"
	@echo "                     handout round trip and its answers, MPI, benchmarks test, the jail as a normal user, the"
	@echo "                     Gradescope autograder, the CI templates as GitHub and GitLab run them)"
	@echo "                     and every command the docs quote"
	@echo "  make check-hosts   (root) 4 hosts as network namespaces: pplab run and grade over MPI across them, a host cut off"
	@echo "  make check-slurm   (root) a one-node Slurm cluster: pplab under srun, salloc + mpirun and the documented sbatch script"
else
	@echo "  make demo          install missing Debian packages, build, draw the schedules' canonical timelines, show your labs"
	@echo "  make test          check that pplab works here: it runs, grades labs/ sandboxed, and the docs' commands hold"
endif
	@echo "  make grade         grade labs/ (LAB=gpipe or LAB=05-zerobubble, GRADE_FLAGS=\"--junit r.xml\")"
	@echo "  make plots         gnuplot figures into out/ (LAB=05: your run of lab 05 beside the canonical one)"
ifeq ($(KIT),1)
	@echo "  make handout       dist/pplab-handout.tar.gz, the student tarball (no code that computes what the labs grade)"
	@echo "  make answers       lib/schedule/answers.rec: the public configurations' answers a handout grades with, from"
	@echo "                     the kit's generators (make test fails while it is out of date); make answer-files lists"
	@echo "                     the generators' files, which a handout leaves out"
	@echo "  make optima        grader/theory/sched_optima.rec: lab 09's optima, from GLPK's integer program (minutes)"
	@echo "  make autograder HIDDEN=F  dist/pplab-autograder.zip for Gradescope: the grading tree, F as its hidden tests,"
	@echo "                     setup.sh and run_autograder (docs/instructor.md, section 5)"
endif
	@echo "  make bench         benchmarks, each against a baseline in the same run"
ifeq ($(KIT),1)
	@echo "  make asan          the unit suites under AddressSanitizer and UBSan"
	@echo "  make fuzz          every fuzz target of tests/fuzz/ (clang, libFuzzer, ASan, UBSan) for FUZZ_S seconds each (default 60) or FUZZ_RUNS executions, whichever ends first"
endif
	@echo "  make info          what was detected (OpenBLAS, cJSON, Criterion, libseccomp, gnuplot, GLPK, CUDA, NCCL, MPI)"
	@echo "  make deps          install the missing Debian packages (root), or print the apt-get line"
	@echo "  make clean         remove build/, build-asan/, build-fuzz/, build-recorded/, dist/ and out/"
	@echo "knobs: NO_CUDA=1 NO_NCCL=1 NO_MPI=1 CUDA_HOME=DIR CC=COMPILER SAN=1 (as make asan) V=1 (full commands)"
ifeq ($(KIT),1)
	@echo "       ANSWERS=recorded (build as a handout does, from lib/schedule/answers.rec, into build-recorded/)"
endif

yn = $(if $(filter 1,$(1)),found,missing)
info:
	@echo "pplab build ($(BUILD)):"
	@echo "  OpenBLAS   $(call yn,$(HAVE_OPENBLAS))     cJSON   $(call yn,$(HAVE_CJSON))     Criterion $(call yn,$(HAVE_CRITERION))     gnuplot $(call yn,$(HAVE_GNUPLOT))     libseccomp $(call yn,$(HAVE_SECCOMP))     GLPK $(call yn,$(HAVE_GLPK))"
	@echo "  nvcc       $(if $(NO_CUDA),off (NO_CUDA=1),$(call yn,$(HAVE_NVCC)))     cuBLAS  $(call yn,$(HAVE_CUBLAS))     NCCL      $(if $(NO_NCCL),off (NO_NCCL=1),$(call yn,$(HAVE_NCCL)))     MPI     $(if $(NO_MPI),off (NO_MPI=1),$(call yn,$(HAVE_MPI)))"
	@echo "  backends   cpu$(if $(filter 1,$(HAVE_CUDA)), cuda)     transports threads$(if $(filter 1,$(HAVE_MPI)), mpi)$(if $(filter 1,$(HAVE_CUDA)), cuda-local)$(if $(filter 1,$(HAVE_NCCL)), nccl)"

# The CPU kernels' loops need a remainder or an aliasing check, which -O2's cheapest cost model never pays for;
# vectorising them keeps every result bit (no reassociation without -ffast-math) and makes GELU 10x faster.
# -fno-math-errno lets sqrtf vectorise: it changes errno on a negative argument, never a result. -fno-trapping-math
# lets a loop with a float comparison in it (a clamp, a mask) vectorise where there are no mask registers (AVX2 and
# older: 2.5x on the attention forward there, 3.6x on GELU); it only allows evaluating a comparison that would not otherwise run, and the
# kernels never read the floating-point exception flags, so no result changes either.
$(BUILD)/obj/kernels/cpu/%.o: CFLAGS += $(if $(filter 1,$(FUZZ)),,-fvect-cost-model=dynamic) -fno-math-errno \
                                        -fno-trapping-math

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(call msg,NVCC,$<)
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj-driver/%.o: %.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$< [driver])
	$(Q)$(CC) $(DRIVER_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(LIB_OBJ) $(LIB_CUDA_OBJ) $(CLI_OBJ) $(DRIVER_OBJ): $(FLAGS_STAMP)

# The functions of pp.h, one per line: what libpp.so exports and what pplab exports for --in-process objects.
$(BUILD)/pp.syms: lib/pp.h
	@mkdir -p $(dir $@)
	$(Q)sed -n 's/^[a-z_ ]*[ *]\(pp_[a-z_0-9]*\)(.*/\1/p' $< | sort -u > $@
$(BUILD)/libpp.map: $(BUILD)/pp.syms
	$(Q){ echo '{ global:'; sed 's/$$/;/' $<; echo 'local: *; };'; } > $@
# pplab and the tests export pp.h and what libpp_cuda.so takes from the runtime (the internal pp__ functions its
# objects leave undefined), so that the plugin binds to the program that opens it.
$(BUILD)/pp.dynlist: $(BUILD)/pp.syms $(LIB_CUDA_OBJ)
	$(Q){ echo '{'; { cat $<; $(if $(LIB_CUDA_OBJ),nm -u $(LIB_CUDA_OBJ) | awk '$$2 ~ /^pp__/ {print $$2}';) } | \
	    sort -u | sed 's/$$/;/'; echo '};'; } > $@

# The CUDA half: the cuda backend, the nccl transport and their kernels, with CUDA's libraries.
$(BUILD)/libpp_cuda.so: $(LIB_CUDA_OBJ)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libpp_cuda.so -o $@.tmp $(LIB_CUDA_OBJ) $(CUDA_LDLIBS) && mv -f $@.tmp $@

# libpp.so exports exactly pp.h; everything else of the runtime stays inside it.
$(BUILD)/libpp.so: $(LIB_OBJ) $(BUILD)/libpp.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libpp.so -Wl,--version-script=$(BUILD)/libpp.map $(SANFLAGS) -o $@.tmp $(LIB_OBJ) \
	    $(LIB_LDLIBS) && mv -f $@.tmp $@

# The internal archive: pplab, the tests and the benchmarks link the whole runtime from it.
$(BUILD)/libpp.a: $(LIB_OBJ)
	@rm -f $@
	$(call msg,AR,$@)
	$(Q)ar rcs $@ $^

# Programs and libraries are linked beside their place, then renamed over it: a grader that opens one during a
# rebuild gets the old file or the new one whole, never one the linker has not yet made executable.
$(BUILD)/pplab-driver: $(DRIVER_OBJ)
	$(call msg,LD,$@)
	$(Q)$(CC) -static -o $@.tmp $(DRIVER_OBJ) $(SECCOMP_STATIC) -lpthread -lm && mv -f $@.tmp $@

# pplab holds the runtime itself and exports pp.h, so that an object loaded with --in-process binds to it.
$(BUILD)/pplab: $(CLI_OBJ) $(LIB_OBJ) $(BUILD)/pp.dynlist
	$(call msg,LD,$@)
	$(Q)$(CC) $(SANFLAGS) -Wl,--dynamic-list=$(BUILD)/pp.dynlist -o $@.tmp $(CLI_OBJ) $(LIB_OBJ) $(GRADER_LIBS) \
	    $(LIB_LDLIBS) && mv -f $@.tmp $@

# pplab similar compares submissions with the kit's answer files too (none in a handout)
$(BUILD)/obj/grader/cli/cmd_similar.o: CFLAGS += \
    -DPP_ANSWER_SOURCES='"$(if $(filter generated,$(ANSWERS)),$(ANSWERS_generated) $(ANSWERS_private))"'
$(BUILD)/obj/grader/cli/cmd_similar.o: Makefile

# A handout's answers (ANSWERS=recorded): answers.rec compiled in as one string, so that pplab answers from anywhere.
$(BUILD)/gen/answers_rec.inc: lib/schedule/answers.rec
	@mkdir -p $(dir $@)
	$(Q)sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $< > $@.tmp && mv -f $@.tmp $@
$(BUILD)/obj/lib/schedule/answers_recorded.o: $(BUILD)/gen/answers_rec.inc
$(BUILD)/obj/lib/schedule/answers_recorded.o: CFLAGS += -I$(BUILD)/gen
# The kit's lab 09 optima (make optima writes them), compiled in the same way.
$(BUILD)/gen/sched_optima_rec.inc: grader/theory/sched_optima.rec
	@mkdir -p $(dir $@)
	$(Q)sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $< > $@.tmp && mv -f $@.tmp $@
$(BUILD)/obj/grader/theory/sched_refs.o: $(BUILD)/gen/sched_optima_rec.inc
$(BUILD)/obj/grader/theory/sched_refs.o: CFLAGS += -I$(BUILD)/gen

# ---- tests ---------------------------------------------------------------------------------------------
$(BUILD)/tests/%: tests/%.c $(BUILD)/libpp.a $(BUILD)/libpp.so $(BUILD)/pplab-driver $(BUILD)/pplab $(PLUGIN) tests/testutil.h
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(GRADER_INC) -Itests $(DEPFLAGS) -Wl,--dynamic-list=$(BUILD)/pp.dynlist -o $@ $< \
	    $(filter-out $(BUILD)/obj/grader/cli/main.o,$(CLI_OBJ)) $(LIB_OBJ) \
	    -lcriterion $(GRADER_LIBS) $(LIB_LDLIBS)

# Programs the suites start under mpirun (they call MPI themselves, which a Criterion test cannot): built with MPI.
HELPER_SRC := $(if $(filter 1,$(HAVE_MPI)),$(wildcard tests/helpers/*.c))
HELPER_BIN := $(patsubst tests/helpers/%.c,$(BUILD)/tests/helpers/%,$(HELPER_SRC))
$(BUILD)/tests/helpers/%: tests/helpers/%.c $(BUILD)/libpp.a
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(MPI_CFLAGS) -Ilib/transport $(DEPFLAGS) -o $@ $< $(BUILD)/libpp.a $(LIB_LDLIBS)
# Tools the suites run commands under (no-namespaces: Docker's refusal of namespaces, for the Gradescope test).
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRC))
$(BUILD)/tests/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DEPFLAGS) -o $@ $< $(SECCOMP_LIBS)
# The recorder of a handout's answers (make answers): the kit's generators and the warm-up's reference answers.
$(BUILD)/tests/record_answers: tests/record_answers.c solutions/00-warmup/warmup.c $(BUILD)/libpp.a $(BUILD)/pplab
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(GRADER_INC) -Itests $(DEPFLAGS) -o $@ tests/record_answers.c \
	    solutions/00-warmup/warmup.c $(filter-out $(BUILD)/obj/grader/cli/main.o,$(CLI_OBJ)) $(LIB_OBJ) \
	    $(GRADER_LIBS) $(LIB_LDLIBS)
# The recorder of lab 09's optima (make optima): the kit's integer program over the default set's problems.
$(BUILD)/tests/record_optima: tests/record_optima.c $(BUILD)/libpp.a $(BUILD)/pplab
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(GRADER_INC) -Itests $(DEPFLAGS) -o $@ tests/record_optima.c \
	    $(filter-out $(BUILD)/obj/grader/cli/main.o,$(CLI_OBJ)) $(LIB_OBJ) $(GRADER_LIBS) $(LIB_LDLIBS)
$(TEST_BIN): $(HELPER_BIN) $(TOOL_BIN) $(REPLAY_BIN)
# test_answers reads the record with the handout's reader, compiled into it
$(BUILD)/tests/test_answers: $(BUILD)/tests/record_answers $(BUILD)/gen/answers_rec.inc
$(BUILD)/tests/test_answers: CFLAGS += -I$(BUILD)/gen

# make test: the quick suites in parallel lanes with the quick self-check beside them; make check: the long
# suites and the whole self-check after that. Each part prints the time it took.
test: deps
	@$(MAKE) --no-print-directory $(JOBS) -s build $(QUICK_BIN)
	@bash scripts/run-tests.sh --selfcheck quick $(BUILD) $(QUICK_BIN)

check: test check-long
check-long: deps
	@$(MAKE) --no-print-directory $(JOBS) -s build $(SLOW_BIN)
	@bash scripts/run-tests.sh --selfcheck full $(BUILD) $(filter-out $(TREE_BIN),$(SLOW_BIN)); a=$$?; \
	    bash scripts/run-tests.sh $(BUILD) $(TREE_BIN); b=$$?; [ $$a -eq 0 ] && [ $$b -eq 0 ]
# root: 4 hosts as network namespaces, MPI over TCP between them (scripts/check-hosts.sh)
check-hosts: deps
	@$(MAKE) --no-print-directory $(JOBS) -s build $(HOSTS_BIN)
	@bash scripts/check-hosts.sh $(BUILD)
# root: a one-node Slurm cluster (munge, slurmctld, slurmd): srun, salloc + mpirun, sbatch (scripts/check-slurm.sh)
check-slurm: deps
	@bash scripts/deps.sh --cluster
	@$(MAKE) --no-print-directory $(JOBS) -s build $(SLURM_BIN)
	@bash scripts/check-slurm.sh $(BUILD)

# UNIT_SKIP: suites to leave out of `make unit` (make asan leaves out test_sweeps, which grades with build/pplab,
# not with the code linked into it, so under ASan it would grade the same binaries a second time)
UNIT_BIN = $(filter-out $(addprefix $(BUILD)/tests/,$(UNIT_SKIP)),$(TEST_BIN))
unit: $(UNIT_BIN)
	@bash scripts/run-tests.sh $(BUILD) $(UNIT_BIN)

selfcheck: build
	@bash scripts/selfcheck.sh $(BUILD)

deps:
	@bash scripts/deps.sh

demo: deps
	@$(MAKE) --no-print-directory $(JOBS) all
	@bash scripts/demo.sh $(BUILD)

grade: build
	@$(BUILD)/pplab grade --impl labs --lab $(or $(LAB),all) $(GRADE_FLAGS)

plots: build
	@LAB=$(LAB) IMPL=$(IMPL) bash scripts/plots.sh $(BUILD) out

# The kit's answer files, one a line: what scripts/handout.sh leaves out of a handout and tests/test_handout.c holds
# it to
answer-files:
	@printf '%s\n' $(ANSWERS_generated) $(ANSWERS_private)

# lib/schedule/answers.rec, what a handout grades with: the kit's generators asked of every public configuration
# (its default tests, and what its docs, demo and plots show: scripts/doccheck.sh --list)
answers: build
ifeq ($(ANSWERS),generated)
	@$(MAKE) --no-print-directory -s $(BUILD)/tests/record_answers
	@bash scripts/doccheck.sh --list | $(BUILD)/tests/record_answers > lib/schedule/answers.rec.tmp
	@mv -f lib/schedule/answers.rec.tmp lib/schedule/answers.rec
	@echo "lib/schedule/answers.rec: $$(grep -c ' = ' lib/schedule/answers.rec) answers recorded"
else
	@echo "make answers: this build records no answers; the kit, which has the generators, writes them"
endif

# grader/theory/sched_optima.rec, lab 09's optima: GLPK's integer program over the default set's problems (minutes)
optima: build
ifeq ($(ANSWERS),generated)
	@$(MAKE) --no-print-directory -s $(BUILD)/tests/record_optima
	@$(BUILD)/tests/record_optima > grader/theory/sched_optima.rec.tmp
	@mv -f grader/theory/sched_optima.rec.tmp grader/theory/sched_optima.rec
	@echo "grader/theory/sched_optima.rec: $$(grep -c ' = ' grader/theory/sched_optima.rec) optima recorded"
else
	@echo "make optima: a handout has no solver; the kit records the optima"
endif

# Both are made from the kit (its solutions/ and git); in a handout they say so and do nothing.
handout: build
ifeq ($(KIT),1)
	@bash scripts/handout.sh
else
	@echo "make handout: this is the handout itself; the kit it was made from makes handouts"
endif
# Gradescope's autograder zip: the handout, HIDDEN (your hidden configuration) and the two generated scripts
autograder: build
ifeq ($(KIT),1)
	@bash scripts/autograder.sh "$(HIDDEN)" dist/pplab-autograder.zip
else
	@echo "make autograder: this is the handout; the instructor's kit makes the autograder"
endif

bench: build
	@$(BUILD)/pplab bench
	@bash bench/compare.sh $(BUILD)

# make fuzz: every target of tests/fuzz/ (fuzz_NAME.c, one parser each) linked with libFuzzer against the kit
# built by clang with ASan and UBSan (FUZZ=1, build-fuzz/), then run by scripts/fuzz.sh for FUZZ_S seconds each
# from its seed corpus. The same targets, built by the kit's compiler with a replay main instead of libFuzzer,
# replay every kept input under make test (tests/test_fuzz.c). FUZZ_RUNS=N also ends a target after N executions,
# whichever comes first: the long run of docs/benchmarks.md is FUZZ_S=3600 FUZZ_RUNS=10000000.
FUZZ_S ?= 60
FUZZ_RUNS ?=
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(LIB_OBJ) $(CLI_OBJ)
	@mkdir -p $(dir $@)
	$(call msg,FUZZ,$@)
	$(Q)$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(GRADER_INC) $(XML_CFLAGS) -Itests -fsanitize=fuzzer -o $@ $< $(FUZZ_LINK)
$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h tests/fuzz/replay.c $(LIB_OBJ) $(CLI_OBJ)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CJSON_CFLAGS) $(GRADER_INC) $(XML_CFLAGS) -Itests -o $@ $< tests/fuzz/replay.c $(FUZZ_LINK)
fuzz-targets: $(FUZZ_BIN)
fuzz: deps
	@$(MAKE) --no-print-directory $(JOBS) -s FUZZ=1 fuzz-targets
	@FUZZ_RUNS=$(FUZZ_RUNS) bash scripts/fuzz.sh build-fuzz $(FUZZ_S)

# CUDA's runtime does not mix with ASan's allocator; the sanitizer pass covers the CPU path (TREE_TESTS: above).
# test_hosts and test_slurm run only on the machines check-hosts and check-slurm make.
asan:
	@$(MAKE) --no-print-directory $(JOBS) SAN=1 NO_CUDA=1 build
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) --no-print-directory $(JOBS) SAN=1 NO_CUDA=1 \
	    UNIT_SKIP="test_sweeps $(TREE_TESTS) test_hosts test_slurm" unit

clean:
	rm -rf build build-asan build-fuzz build-recorded dist out

-include $(shell find $(BUILD)/obj $(BUILD)/obj-driver $(BUILD)/tests -name '*.d' 2>/dev/null)
