"""Grading benchmark: `python -m autograder bench [--students N] [--workers 1 2] [--keep DIR] [--notebooks nmt bert clip]`.

Builds N synthetic students (a mix of reference, wrong and damaged submissions) from the release
and source notebooks, grades them with `python -m autograder grade` once per worker count, and
prints seconds per student, speed-up, core-seconds per student (the CPU time of the grading process and
every process under it), busy cores and peak memory per worker, then a projection for a whole course
and where grading time goes. Each grading run is a fresh process, so its memory and start-up are
measured as a user sees them.

Core-seconds are what scales: a course of S students needs about S x core-seconds per student of CPU,
whatever the number of workers, so on N fully used cores it takes at least that divided by N.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder import contract, paths
from autograder.content import build
from autograder.demo import reference_submission, with_cell, wrong_samples
from autograder.grading.scheduler import STATS_ENV

KINDS = ("reference", "wrong", "damaged")


# --- synthetic students -------------------------------------------------------------------------


def in_course_order(names):
    """Notebook names in course order (nmt, bert, clip), any others after them alphabetically."""
    names = set(names)
    return [nb for nb in contract.NOTEBOOKS if nb in names] + sorted(names - set(contract.NOTEBOOKS))


def damage(nb):
    """What a Colab download does to a notebook: Colab metadata, nbformat 4.4 without cell ids."""
    nb.metadata["colab"] = {"provenance": [], "name": "copy of the notebook"}
    nb.metadata["accelerator"] = "GPU"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.nbformat_minor = 4
    for i, cell in enumerate(nb.cells):
        cell.pop("id", None)
        cell.metadata["id"] = f"colab{i:04d}"
    return nb


def build_students(dest, n, release, source, wrong=None, notebooks=None):
    """Write n students into dest/<student>/ and return [(student, kind)].

    Inputs:
    - dest: folder to create (a SUBMISSIONS folder for `grade`).
    - n: number of students; kinds cycle reference, wrong, damaged.
    - release, source: folders holding the release and source notebooks.
    - wrong: {notebook: {grade_id: cell source}} (default: autograder.content.samples, via autograder.demo).
    - notebooks: the notebooks students submit (default: every one in both folders); the others count as missing.
    Returns:
    - list of (student, kind). A wrong student has one wrong cell per notebook (rotating through the
      samples); a damaged one has Colab names and metadata for its first notebook, the release copy
      of its second (nothing solved) and no third notebook.
    """
    dest = Path(dest)
    names = in_course_order(p.stem for p in Path(release).glob("*.ipynb") if (Path(source) / p.name).exists())
    if notebooks is not None:
        unknown = sorted(set(notebooks) - set(names))
        if unknown:
            raise ValueError(f"no notebook {', '.join(unknown)} in both {release} and {source}")
        names = [nb for nb in names if nb in notebooks]
    if not names:
        raise FileNotFoundError(f"no notebook in both {release} and {source}")
    wrong = {nb: wrong_samples(nb) for nb in names} if wrong is None else wrong
    release_nbs = {nb: nbformat.read(Path(release) / f"{nb}.ipynb", as_version=4) for nb in names}
    reference = {
        nb: reference_submission(release_nbs[nb], nbformat.read(Path(source) / f"{nb}.ipynb", as_version=4))
        for nb in names
    }
    students = []
    for i in range(n):
        student, kind = f"student{i + 1:03d}", KINDS[i % len(KINDS)]
        folder = dest / student
        folder.mkdir(parents=True, exist_ok=True)
        for j, nb_name in enumerate(names):
            nb, filename = nbformat.from_dict(json.loads(json.dumps(reference[nb_name]))), f"{nb_name}.ipynb"
            samples = sorted(wrong.get(nb_name, {}).items())
            if kind == "wrong" and samples:
                nb = with_cell(nb, *samples[(i // len(KINDS)) % len(samples)])
            if kind == "damaged":
                if j == 2:
                    continue  # never submitted
                if j == 1:
                    nb = release_nbs[nb_name]  # downloaded and submitted untouched
                else:
                    nb, filename = damage(nb), f"Copy of {nb_name}.ipynb"
            (folder / filename).write_text(nbformat.writes(nb))
        students.append((student, kind))
    return students


# --- measurement --------------------------------------------------------------------------------


def cpu_times():
    """(busy, total) CPU time of the whole machine so far, in clock ticks summed over cores (/proc/stat),
    or None where there is no /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(before, after, cores=None):
    """Mean number of cores busy between two cpu_times() readings (None if either is missing)."""
    if before is None or after is None or after[1] == before[1]:
        return None
    cores = cores or os.cpu_count() or 1
    return cores * (after[0] - before[0]) / (after[1] - before[1])


class TreeCPU:
    """CPU seconds (user + system) of a process and every process under it, sampled while they run.

    The grading tree's processes do not all end up in this process's RUSAGE_CHILDREN: kernels and sandboxes
    in a pid namespace of their own are reaped inside it, and a killed namespace takes its processes' times
    with it. So each process of the tree (found through parent links, namespaces included) is read every
    `interval` seconds and its last reading counts; a process can be missed by at most one interval of CPU,
    and one that lives less than an interval not at all.
    """

    def __init__(self, pid, interval=0.1):
        import threading

        self.pid, self.interval, self.seen = pid, interval, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self):
        """Read every process of the tree once."""
        import psutil  # a dependency of distributed

        try:
            root = psutil.Process(self.pid)
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            return
        for proc in procs:
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    self.seen[(proc.pid, proc.create_time())] = times.user + times.system
            except psutil.Error:
                continue

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Stop sampling; returns the CPU seconds of every process seen."""
        self._stop.set()
        self._thread.join()
        return sum(self.seen.values())


def row_from(workers, n_students, wall, stats, cores=None, cpu=None):
    """One table row from a batch's wall time, its scheduler statistics (RunStats.as_dict()), the mean
    number of busy cores of the whole machine while it ran and the CPU seconds of the grading process tree
    (None when not measured)."""
    return {
        "workers": workers,
        "students": n_students,
        "wall": wall,
        "grading": stats["seconds"],
        "cores": cores,
        "cpu": cpu,
        "startup": stats["startup_seconds"],
        "mode": stats["mode"],
        "failures": stats["failures"],
        "rss": [(w["peak_rss_mb"], w["children_peak_rss_mb"]) for w in stats["workers"]],
    }


def format_table(rows):
    """The benchmark table: seconds per student and speed-up against the first row, core-seconds per student
    and the cores the grading processes kept busy (their CPU seconds over the wall time), the whole machine's
    busy cores, memory per worker."""
    base = rows[0]
    head = (
        f"{'workers':>7} {'students':>8} {'wall s':>8} {'s/student':>9} {'speed-up':>8} "
        f"{'core-s/student':>14} {'grading cores':>13} {'busy cores':>10} "
        f"{'grading s':>9} {'cluster start s':>15}  "
        "peak RSS per worker, MiB (process / largest child)"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        rss = ", ".join(f"{p:.0f} / {c:.0f}" for p, c in r["rss"]) or "-"
        cores = "-" if r.get("cores") is None else f"{r['cores']:.2f}"
        cpu = r.get("cpu")
        per_student = "-" if cpu is None else f"{cpu / r['students']:.1f}"
        own = "-" if cpu is None else f"{cpu / r['wall']:.2f}"
        lines.append(
            f"{r['workers']:>7} {r['students']:>8} {r['wall']:>8.1f} {r['wall'] / r['students']:>9.1f} "
            f"{base['wall'] / r['wall']:>7.2f}x {per_student:>14} {own:>13} {cores:>10} "
            f"{r['grading']:>9.1f} {r['startup']:>15.1f}  {rss}"
        )
    return "\n".join(lines)


def projection(core_seconds_per_student, students=500, cores=(2, 16, 64)):
    """Lines projecting a course of `students` from the measured core-seconds per student: the CPU it needs
    and the least wall time on each number of cores (every core busy grading; fixed start-up not counted)."""
    total = core_seconds_per_student * students
    lines = [
        f"projection for {students} students at {core_seconds_per_student:.1f} core-s each: "
        f"{total / 3600:.2f} core-hours of CPU"
    ]
    for n in cores:
        lines.append(f"  on {n:>3} cores: at least {total / n / 60:.1f} min")
    return lines


def time_breakdown(out):
    """Mean seconds per submission by notebook and phase from OUT/timings.csv ('' if absent)."""
    path = Path(out) / "timings.csv"
    if not path.exists():
        return ""
    rows = list(csv.DictReader(open(path)))
    phases = [p for p in ("seconds", "overhead", "setup", "cells", "tests") if rows and p in rows[0]]
    lines = [f"{'notebook':<8} {'n':>3} " + " ".join(f"{p:>9}" for p in phases)]
    for nb in in_course_order({r["notebook"] for r in rows}):
        sel = [r for r in rows if r["notebook"] == nb]
        lines.append(
            f"{nb:<8} {len(sel):>3} " + " ".join(f"{sum(float(r[p]) for r in sel) / len(sel):>9.1f}" for p in phases)
        )
    return "\n".join(lines)


def fixed_costs(out):
    """Fixed costs of a graded OUT from its per-student results (OUT/.state): lines giving the mean kernel start
    per notebook (KeyedKernel asking for the kernel to its first cell; a worker's first kernel also waits for
    its zygote's imports), then over all notebooks the overhead split into kernel start and nbgrader's own
    work (its process, reading and writing the notebooks, the gradebook: overhead is shared out evenly
    between a student's notebooks, so only the mean over all of them splits), and the zygotes' import time
    ('' if absent)."""
    states = [json.loads(p.read_text()) for p in sorted((Path(out) / ".state").glob("*.json"))]
    timings = {}
    for state in states:
        for nb, summary in state.get("notebooks", {}).items():
            t = summary.get("timing") or {}
            if "kernel_start" in t:
                timings.setdefault(nb, []).append((t["kernel_start"], t["overhead"]))
    lines = []
    if timings:
        lines.append(f"{'notebook':<8} {'n':>3} {'kernel start':>12}")
        for nb in in_course_order(timings):
            sel = timings[nb]
            lines.append(f"{nb:<8} {len(sel):>3} {sum(k for k, _ in sel) / len(sel):>12.2f}")
        every = [t for sel in timings.values() for t in sel]
        kernel, overhead = (sum(x[i] for x in every) / len(every) for i in (0, 1))
        lines.append(
            f"all notebooks: overhead {overhead:.2f} s = kernel start {kernel:.2f} s + nbgrader "
            f"{overhead - kernel:.2f} s"
        )
    zygotes = [
        s["zygote"]["preload_seconds"]
        for s in states
        if (s.get("zygote") or {}).get("resets") == 0 and s["zygote"].get("preload_seconds") is not None
    ]
    if zygotes:
        lines.append(
            f"zygote imports: {sum(zygotes) / len(zygotes):.1f} s each, {len(zygotes)} zygote(s) "
            f"({sum(zygotes) / max(1, len(states)):.2f} s per student here; once per worker, in parallel "
            "with nbgrader's start, and with one worker with the ingest too)"
        )
    return "\n".join(lines)


def feedback_seconds(out):
    """(pages, seconds) to render every feedback page of a graded OUT again (feedback.rerender)."""
    from autograder.reports import feedback

    start = time.perf_counter()
    pages = feedback.rerender(out)
    return pages, time.perf_counter() - start


def seed_template(out, template, source):
    """Put an already built grading template into OUT's cache, stamped for `source` (see grade.ensure_template)."""
    from autograder.grading.pipeline import source_digest

    cache = Path(out) / ".cache" / "template"
    if cache.exists():
        shutil.rmtree(cache)
    shutil.copytree(template, cache)
    (cache / "source.sha256").write_text(source_digest(source))


def grade_batch(submissions, out, workers, log, source=paths.SOURCE):
    """Run `python -m autograder grade` as a fresh process; returns (wall seconds, RunStats dict, mean busy
    cores of the whole machine meanwhile or None, CPU seconds of the grading process and all its
    descendants)."""
    stats_file = Path(out).with_suffix(".stats.json")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **{STATS_ENV: str(stats_file)})
    cmd = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(submissions),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--force",
        "--source",
        str(source),
    ]
    start, cpu = time.perf_counter(), cpu_times()
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=paths.ROOT)
        tree = TreeCPU(proc.pid).start()
        proc.wait()
    wall, cores, used = time.perf_counter() - start, busy_cores(cpu, cpu_times()), tree.stop()
    if proc.returncode != 0 or not stats_file.exists():
        tail = Path(log).read_text()[-2000:]
        raise RuntimeError(f"grading with {workers} worker(s) failed (exit {proc.returncode}); log {log}:\n{tail}")
    return wall, json.loads(stats_file.read_text()), cores, used


def score_table(out):
    """{(student, notebook): (score, status)} from OUT/grades.csv."""
    return {
        (r["student"], r["notebook"]): (r["score"], r["status"]) for r in csv.DictReader(open(Path(out) / "grades.csv"))
    }


def main(
    *, students: int = 6, workers: list[int] = (1, 2), keep: Path | None = None, notebooks: list[str] | None = None
) -> int:
    """`bench`: grade `students` synthetic students with each worker count and print the tables."""
    workers = list(workers)
    work = keep or Path(tempfile.mkdtemp(prefix="a3-bench-"))
    try:
        work.mkdir(parents=True, exist_ok=True)
        print(f"bench: building {students} synthetic students in {work}", flush=True)
        source = work / "source"  # a snapshot, so every run grades against the same notebooks
        if source.exists():
            shutil.rmtree(source)
        shutil.copytree(paths.SOURCE, source, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        t0 = time.perf_counter()
        template = build.template(work / "template", source)
        template_seconds = time.perf_counter() - t0
        release = template / "release"
        made = build_students(work / "submissions", students, release, source, notebooks=notebooks)
        kinds = {k: sum(1 for _, kind in made if kind == k) for k in KINDS}
        submitted = in_course_order(
            {p.name.removeprefix("Copy of ").removesuffix(".ipynb") for p in (work / "submissions").glob("*/*.ipynb")}
        )
        print(f"bench: {kinds}; notebooks submitted: {', '.join(submitted)}", flush=True)
        rows, scores = [], {}
        for w in workers:
            out = work / f"out-{w}"
            seed_template(out, template, source)
            print(f"bench: grading with {w} worker(s)…", flush=True)
            wall, stats, cores, cpu = grade_batch(work / "submissions", out, w, work / f"grade-{w}.log", source)
            rows.append(row_from(w, len(made), wall, stats, cores, cpu))
            scores[w] = score_table(out)
        print(
            f"\nThe grading template (nbgrader generate_assignment) took {template_seconds:.1f} s once; every run "
            "below reuses it, as `grade` does on an OUT it has graded into before."
        )
        print(format_table(rows))
        print(
            "core-s/student: CPU seconds (user + system) of the grading process and every process under it "
            "(workers, nbgrader, kernels, sandboxes), per student; grading cores: those CPU seconds over the wall "
            "time, the cores the run itself kept busy."
        )
        print(
            f"busy cores: the whole machine's mean over the run, of {os.cpu_count()} (other programs included); the "
            "speed-up can reach at most the cores a run can use divided by the busy cores of the 1-worker run."
        )
        print()
        widest = max(rows, key=lambda r: r["workers"])  # the run closest to a course on a full machine
        print("\n".join(projection(widest["cpu"] / widest["students"], cores=(2, 16, 64))))
        print(f"(from the {widest['workers']}-worker run: more workers per core cost more core-seconds each)")
        same = all(s == scores[workers[0]] for s in scores.values())
        print(f"\ngrades identical across worker counts: {'yes' if same else 'NO'}")
        statuses = {}
        for score, status in scores[workers[0]].values():
            statuses[status] = statuses.get(status, 0) + 1
        print("statuses: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
        breakdown = time_breakdown(work / f"out-{workers[0]}")
        if breakdown:
            print(f"\nwhere the time goes with {workers[0]} worker(s) (mean seconds per submission):\n{breakdown}")
            print(
                "overhead: nbgrader and the kernel's start and stop per notebook (one nbgrader process per "
                "student, a kernel forked from the worker's zygote per notebook); setup: the setup cell; cells: "
                "every other cell but the test cells"
            )
        fixed = fixed_costs(work / f"out-{workers[0]}")
        if fixed:
            print(
                f"\nfixed costs with {workers[0]} worker(s) (mean seconds per submission; both are part of "
                f"the overhead above):\n{fixed}"
            )
        pages, seconds = feedback_seconds(work / f"out-{workers[0]}")
        print(
            f"feedback pages: {seconds / len(made):.2f} s per student ({pages} pages rendered again by "
            "feedback.rerender, in one process)"
        )
        return 0 if same else 1
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
