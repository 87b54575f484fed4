# Test-only ReFrame checks for tests/it/reframe.rs: subclasses of the
# shipped library (contrib/reframe/commbench_checks.py) with references,
# as a site's own test file would have them. Not shipped: one of them has
# a reference no machine can meet, to prove that ReFrame fails on it.
#
# SPDX-License-Identifier: MIT OR Apache-2.0

import os

import reframe as rfm
import reframe.utility as util
from reframe.core.builtins import parameter

_lib = util.import_module_from_file(os.path.abspath(os.path.join(
    os.path.dirname(__file__), '..', '..', 'contrib', 'reframe',
    'commbench_checks.py'
)))


@rfm.simple_test
class commbench_ci_met_references(_lib.commbench_pt2pt_base):
    '''References any machine meets, per system and partition: the
    comparison runs and passes.'''

    benchmark = parameter(['osu_latency', 'osu_bw'])
    tags = {'commbench-ci', 'pass'}
    site_references = {
        'osu_latency': {
            'local:default': {'latency': (1e6, None, 0.0, 'us')},
        },
        'osu_bw': {
            'local:default': {'bandwidth': (1e-3, 0.0, None, 'MB/s')},
        },
    }


@rfm.simple_test
class commbench_ci_impossible_bandwidth(_lib.commbench_pt2pt_base):
    '''A bandwidth floor of 10^12 MB/s: ReFrame must report a performance
    failure.'''

    benchmark = parameter(['osu_bw'])
    tags = {'commbench-ci', 'fail'}
    site_references = {
        'osu_bw': {
            '*': {'bandwidth': (1e12, -0.01, None, 'MB/s')},
        },
    }
