# ReFrame configuration for running the commbench checks on this host:
# the local scheduler (jobs are processes of ReFrame's own), Open MPI's
# mpirun as the launcher. This is what the repository's CI uses
# (tests/it/reframe.rs); a site writes its own with its scheduler and
# launcher (see contrib/reframe/README.md).
#
# Open MPI refuses to start more ranks than cores, and to run as root,
# unless told: --oversubscribe comes from the partition's extras below
# (the checks add it to the launcher); OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are for whoever runs ReFrame as root to
# set in its environment, which the local scheduler's jobs inherit.
#
# SPDX-License-Identifier: MIT OR Apache-2.0

site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': 'This host, Open MPI mpirun',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    # ReFrame's own environment: nothing loaded or set.
                    'environs': ['builtin'],
                    'max_jobs': 1,
                    'extras': {
                        'commbench_launcher_options': ['--oversubscribe'],
                    },
                },
            ],
        },
    ],
}
