/* rsswrap: runs a command and prints, on stderr, its peak resident memory
 * and the CPU time it used (user + system) as "rsswrap RANK KIB MS" (RANK
 * from the launcher's environment), so that
 * scripts/bench-scale.sh can measure each rank of a job under mpirun or
 * mpiexec without a heavier wrapper. Exits with the command's status. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *rank_of(void) {
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v) return v;
    }
    return "?";
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: rsswrap COMMAND [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("rsswrap: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("rsswrap: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("rsswrap: wait4");
        return 2;
    }
    long ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000L + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000L;
    fprintf(stderr, "rsswrap %s %ld %ld\n", rank_of(), ru.ru_maxrss, ms);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}
