# ReFrame checks for commbench, the OSU Micro-Benchmarks 7.4 drop-in.
#
# Each check runs one commbench binary (osu_latency, osu_bw, osu_allreduce
# ...) with --results-dir into its stage directory and reads what the run
# wrote there: the CSV of results (one row per datatype, size and window)
# and the JSON run record beside it. Nothing is scraped from stdout.
#
#   sanity       the run record says "complete", the CSV is there, it has
#                a row for every size the run planned (record "plan"), and
#                as many rows as the record counted (record "results.rows");
#                optionally `commbench history check` passed (see below)
#   performance  values read from the CSV at full precision (see
#                commbench_base.set_perf_variables for the names)
#
# The library is generic: it holds no site's numbers. A site subclasses
# the checks in its own test file and gives references per system and
# partition in `site_references` (keyed by benchmark) or ReFrame's own
# `reference`; see contrib/reframe/README.md.
#
# SPDX-License-Identifier: MIT OR Apache-2.0

import csv
import glob
import json
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import (parameter, run_after, run_before,
                                   sanity_function, variable)
from reframe.core.exceptions import SanityError


def _size_bytes(text):
    '''A size as commbench's -m takes it: 8, 4K, 1M, 1G (powers of 1024).'''
    text = str(text).strip().upper()
    mult = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    if text and text[-1] in mult:
        return int(text[:-1]) * mult[text[-1]]

    return int(text)


# The exit status `commbench history check` prints after itself in the
# job's output (the job script's postrun step), for the sanity step to read.
HISTORY_MARK = 'commbench-history-check-exit:'


class commbench_base(rfm.RunOnlyRegressionTest):
    '''One commbench benchmark binary under the partition's MPI launcher.

    Not a test on its own: commbench_pt2pt_check and
    commbench_collective_check below are, or a site's subclass.
    '''

    # ``benchmark``, the binary (e.g. ``osu_latency``), is each subclass's
    # parameter.

    #: Where the commbench binaries are; empty: $COMMBENCH_BIN_DIR, else PATH.
    bin_dir = variable(str, value='')

    #: Message sizes, as -m takes them (``MIN:MAX``); empty: OSU's default.
    message_sizes = variable(str, value='')

    #: Timed and warm-up iterations per size (-i, -x); 0: OSU's default.
    iterations = variable(int, value=0)
    warmup = variable(int, value=0)

    #: More options for the binary, after the ones above.
    extra_opts = variable(typ.List[str], value=[])

    #: Options for the launcher (e.g. ``--oversubscribe`` for Open MPI's
    #: mpirun with more ranks than cores); added to the partition's
    #: ``extras['commbench_launcher_options']``.
    launcher_options = variable(typ.List[str], value=[])

    #: References per benchmark: ``{'osu_bw': {'sys:part': {'bandwidth':
    #: (value, lower, upper, 'MB/s')}}}``. The entry of this check's
    #: benchmark is merged into ReFrame's ``reference``.
    site_references = variable(dict, value={})

    #: Size whose latency is reported as ``latency`` (point-to-point
    #: latency) and whose row the collectives report; 0: see each check.
    report_size = variable(int, value=0)

    # --- commbench history (off unless history_db is set) ---

    #: A history database: when set, the job runs ``commbench history
    #: check --db DB results`` after the benchmark and the check fails on
    #: its non-zero exit.
    history_db = variable(str, value='')

    #: ``--last N`` and ``--tolerance PCT%`` for history check; 0 and
    #: empty leave commbench's defaults.
    history_last = variable(int, value=0)
    history_tolerance = variable(str, value='')

    #: Exit 3 ("nothing to judge": a new database, a new benchmark) passes.
    history_allow_empty = variable(bool, value=False)

    #: Add the run to the database when its check passed (exit 0, or 3 with
    #: history_allow_empty), so the next run is judged against it too. A
    #: failing run is not added.
    history_add = variable(bool, value=False)

    num_tasks = 2
    valid_systems = ['*']
    valid_prog_environs = ['*']
    # The CSV and record, beside the job's output, are what the run left.
    keep_files = ['results']
    tags = {'commbench'}

    @property
    def results_dir(self):
        return os.path.join(self.stagedir, 'results')

    def _bin(self, name):
        d = self.bin_dir or os.environ.get('COMMBENCH_BIN_DIR', '')
        return os.path.join(d, name) if d else name

    @run_after('init')
    def set_references(self):
        own = self.site_references.get(self.benchmark, {})
        if own:
            merged = dict(self.reference)
            for syspart, refs in own.items():
                merged[syspart] = {**merged.get(syspart, {}), **refs}

            self.reference = merged

    @run_before('run')
    def set_command(self):
        self.executable = self._bin(self.benchmark)
        opts = ['--results-dir', 'results']
        if self.message_sizes:
            opts += ['-m', self.message_sizes]

        if self.iterations:
            opts += ['-i', str(self.iterations)]

        if self.warmup:
            opts += ['-x', str(self.warmup)]

        self.executable_opts = opts + list(self.extra_opts)
        site = self.current_partition.extras.get(
            'commbench_launcher_options', []
        )
        self.job.launcher.options += list(site) + list(self.launcher_options)
        if self.history_db:
            self.postrun_cmds += self._history_cmds()

    def _history_cmds(self):
        check = [self._bin('commbench'), 'history', 'check', 'results',
                 '--db', self.history_db]
        if self.history_last:
            check += ['--last', str(self.history_last)]

        if self.history_tolerance:
            check += ['--tolerance', self.history_tolerance]

        cmds = [' '.join(shlex.quote(a) for a in check),
                'cb_history=$?',
                f'echo "{HISTORY_MARK} $cb_history"']
        if self.history_add:
            ok = '0 3' if self.history_allow_empty else '0'
            add = [self._bin('commbench'), 'history', 'add', 'results',
                   '--db', self.history_db]
            cmds.append(
                f'case " {ok} " in *" $cb_history "*) '
                f'{" ".join(shlex.quote(a) for a in add)} ;; esac'
            )

        return cmds

    # --- what the run wrote ---

    def _record_path(self):
        # One run, one record: the JSON beside the CSV (a `_2` suffix only
        # if the name was taken, which a fresh stage directory rules out).
        found = sorted(glob.glob(os.path.join(self.results_dir, '*.json')))
        if len(found) != 1:
            raise SanityError(
                f'expected one run record in {self.results_dir}, '
                f'found {len(found)}'
            )

        return found[0]

    def run_record(self):
        if not hasattr(self, '_cb_record'):
            with open(self._record_path()) as f:
                self._cb_record = json.load(f)

        return self._cb_record

    def csv_path(self):
        '''The CSV the run wrote, as its run record names it.'''
        rec = self.run_record()
        csv_name = (rec.get('results') or {}).get('csv')
        if not csv_name:
            raise SanityError(
                f'the run record names no CSV: '
                f'{(rec.get("results") or {}).get("incomplete")}'
            )

        # The record holds the path as the run saw it (relative to its
        # working directory, the stage directory).
        path = os.path.join(self.stagedir, csv_name)
        if not os.path.exists(path):
            raise SanityError(f'{path}: the CSV the run record names is missing')

        return path

    def csv_rows(self):
        if not hasattr(self, '_cb_rows'):
            with open(self.csv_path(), newline='') as f:
                self._cb_rows = list(csv.DictReader(f))

        return self._cb_rows

    def csv_row(self, size=None, datatype=None):
        '''The row of a size (default: the largest) and datatype (default:
        the first one in the CSV).'''
        rows = self.csv_rows()
        if not rows:
            raise SanityError(f'{self.csv_path()}: no rows')

        datatype = datatype if datatype is not None else rows[0]['datatype']
        rows = [r for r in rows if r['datatype'] == datatype]
        if size is None:
            size = max(int(r['size_bytes']) for r in rows)

        for r in rows:
            if int(r['size_bytes']) == size:
                return r

        raise SanityError(
            f'{self.csv_path()}: no row for {size} bytes ({datatype})'
        )

    def csv_value(self, column, size=None):
        cell = self.csv_row(size)[column]
        if cell == '':
            raise SanityError(
                f'{self.csv_path()}: {column} is empty at '
                f'{self.csv_row(size)["size_bytes"]} bytes'
            )

        return float(cell)

    def planned_points(self):
        '''The (datatype, size) points the run planned, from the record's
        plan, and the rows they make (a row per window or placement).'''
        plan = self.run_record().get('plan') or {}
        points, rows = set(), 0
        for span in plan.get('spans') or []:
            sizes = span.get('sizes') or []
            points |= {(span.get('datatype') or '', int(s)) for s in sizes}
            rows += len(sizes) * max(1, len(span.get('cells') or []))

        return points, rows

    # --- sanity ---

    def _run_is_complete(self):
        rec = self.run_record()
        status = rec.get('status')
        if status != 'complete':
            raise SanityError(
                f'run record status {status!r}'
                + (f': {rec["status_detail"]}' if rec.get('status_detail')
                   else '')
            )

        rows = self.csv_rows()
        counted = (rec.get('results') or {}).get('rows')
        if counted is not None and counted != len(rows):
            raise SanityError(
                f'{self.csv_path()}: {len(rows)} rows, the run record '
                f'counted {counted}'
            )

        if not rows:
            raise SanityError(f'{self.csv_path()}: no rows')

        planned, _ = self.planned_points()
        measured = {(r['datatype'], int(r['size_bytes'])) for r in rows}
        missing = sorted(planned - measured)
        if missing:
            raise SanityError(
                f'{self.csv_path()}: no row for planned (datatype, size) '
                f'{missing}'
            )

        bad = [r['size_bytes'] for r in rows if r['validation'] == 'Fail']
        if bad:
            raise SanityError(f'validation failed at size(s) {bad}')

        return True

    def _history_passed(self):
        if not self.history_db:
            return True

        codes = sn.evaluate(sn.extractall(
            rf'^{HISTORY_MARK} (\d+)$', self.stdout, 1, int
        ))
        if not codes:
            raise SanityError('commbench history check did not report')

        code = codes[-1]
        if code == 0 or (code == 3 and self.history_allow_empty):
            return True

        meaning = {1: 'a regression', 2: 'bad input',
                   3: 'nothing to judge'}.get(code, 'an error')
        raise SanityError(
            f'commbench history check exited {code} ({meaning}); '
            f'its report is in the job output'
        )

    @sanity_function
    def validate(self):
        # Evaluated after the run: each step raises SanityError saying
        # what is wrong.
        return self._run_is_complete() and self._history_passed()

    # --- performance ---

    def perf_columns(self):
        '''{name: (column, size or None, unit)}: what to report.'''
        raise NotImplementedError

    @run_before('performance')
    def set_perf_variables(self):
        self.perf_variables = {}
        for name, (column, size, unit) in self.perf_columns().items():
            self.perf_variables[name] = sn.make_performance_function(
                sn.defer(self.csv_value(column, size)), unit
            )


class commbench_pt2pt_base(commbench_base):
    '''osu_latency, osu_bw, osu_bibw and their kin.

    Performance variables:
      latency         us    avg_lat_us at report_size (default 8 bytes)
      bandwidth       MB/s  bw_MBps at report_size (default the largest)
      efficiency_pct  %     share of the path's peak there, when known
    '''

    def perf_columns(self):
        if self.benchmark in ('osu_latency', 'osu_latency_mt',
                              'osu_latency_mp', 'osu_multi_lat'):
            return {'latency': ('avg_lat_us', self.report_size or 8, 'us')}

        size = self.report_size or None
        cols = {'bandwidth': ('bw_MBps', size, 'MB/s')}
        if self.csv_row(size).get('efficiency_pct'):
            cols['efficiency_pct'] = ('efficiency_pct', size, '%')

        return cols


class commbench_collective_base(commbench_base):
    '''Blocking collectives (osu_allreduce, osu_alltoall ...).

    Performance variables, at report_size (default the largest size):
      latency         us    avg_lat_us
      busbw           GB/s  bus bandwidth, as nccl-tests defines it
      efficiency_pct  %     share of the path's peak, when known
    '''

    def perf_columns(self):
        size = self.report_size or None
        cols = {'latency': ('avg_lat_us', size, 'us')}
        row = self.csv_row(size)
        if row.get('busbw_GBps'):
            cols['busbw'] = ('busbw_GBps', size, 'GB/s')

        if row.get('efficiency_pct'):
            cols['efficiency_pct'] = ('efficiency_pct', size, '%')

        return cols


@rfm.simple_test
class commbench_pt2pt_check(commbench_pt2pt_base):
    benchmark = parameter(['osu_latency', 'osu_bw', 'osu_bibw'])
    tags = {'commbench', 'pt2pt'}


@rfm.simple_test
class commbench_collective_check(commbench_collective_base):
    benchmark = parameter(['osu_allreduce', 'osu_alltoall',
                           'osu_allgather', 'osu_bcast'])
    tags = {'commbench', 'collective'}
