# pplab's container: the Debian 12 machine the kit's two commands expect (make demo, make test), for a desk that
# is not one (macOS, Windows, Codespaces). It holds the kit's packages and a user, never the kit itself: the work
# tree is mounted at run time, so a student's files live on the host and survive the container.
#   docker build -t pplab .
#   docker run --rm -it -v "$PWD":/work/pplab pplab            (then: make demo, make test)
# Builds for amd64 and arm64 alike: the package list has nothing of one architecture (no CUDA), and make detects
# the CPU at build time inside, as on any Debian machine.
FROM debian:12

# The kit's one package list (scripts/deps.sh, which make demo and make test run too and then find nothing missing).
COPY scripts/deps.sh /tmp/pplab-deps.sh
RUN bash /tmp/pplab-deps.sh && rm -rf /var/lib/apt/lists/* /tmp/pplab-deps.sh

# The default user is not root, as on a student's machine: grading then jails a submission under this uid. Root
# works too (docker run --user root), and grading as root gives each test a uid of its own. uid 1000 matches the
# first user of most Linux hosts, so that files written in a mounted folder stay theirs.
RUN useradd --create-home --uid 1000 --shell /bin/bash student && mkdir -p /work/pplab && chown student: /work/pplab
# A mounted folder this user cannot write is said in one line, with the fix, before any command runs.
COPY scripts/container-entry.sh /usr/local/bin/pplab-entry
# Docker's default seccomp profile refuses process_vm_readv, the cross-memory copy Open MPI's shared-memory
# transport uses for large messages: each refused copy prints "Read -1, expected N, errno = 1" into the run's
# output (open-mpi/ompi#4948). Copying through the shared segment instead is what it falls back to anyway.
ENV OMPI_MCA_btl_vader_single_copy_mechanism=none
USER student
WORKDIR /work/pplab
ENV LANG=C.UTF-8
ENTRYPOINT ["/usr/local/bin/pplab-entry"]
CMD ["bash"]
