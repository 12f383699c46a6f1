"""Live progress: plain lines for CI and pipes, live lines on a terminal; hostile text stays harmless.

The end-to-end view (a real build's steps and the probe layers in the captured output, the build log
written as the build goes) is in test_pipeline_engine.py; pip's bytes come from a real pip in
test_wheelhouse.py.
"""

from __future__ import annotations

import io

import pytest

from gpumatrix.images.build import build_step
from gpumatrix.run.probe import _tail, probe_activity
from gpumatrix.run.progress import Progress, RichProgress, elapsed_text, progress_for


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain() -> tuple[Progress, list[str], Clock]:
    lines: list[str] = []
    clock = Clock()
    return Progress(lines.append, every_s=10.0, clock=clock), lines, clock


def test_plain_lines_name_the_cell_and_its_elapsed_time_and_change_only_when_the_activity_does():
    progress, lines, clock = plain()
    progress.begin("cpu-torch2.13.0", "preparing its build")
    clock.now += 41
    progress.step("cpu-torch2.13.0", "step 5/9: RUN /tmp/install-torch.sh")
    progress.step("cpu-torch2.13.0", "step 5/9: RUN /tmp/install-torch.sh")  # the same: nothing new to say
    clock.now += 3600
    progress.step("cpu-torch2.13.0", "probing layer 1/6 (kernel driver): kernel_driver.nvidia_driver")
    assert lines == ["cpu-torch2.13.0 [0:00] preparing its build",
                     "cpu-torch2.13.0 [0:41] step 5/9: RUN /tmp/install-torch.sh",
                     "cpu-torch2.13.0 [1:00:41] probing layer 1/6 (kernel driver): kernel_driver.nvidia_driver"]


def test_frequent_detail_is_a_line_at_most_every_few_seconds_per_cell():
    progress, lines, clock = plain()
    progress.begin("a", "resolving")
    for i in range(48):  # pip's raw progress: four lines a second
        clock.now += 0.25
        progress.detail("a", f"downloading torch.whl: {i} of 48 MB")
    clock.now += 0.25
    progress.detail("b", "downloading numpy.whl: 1 of 9 MB")  # another cell has its own clock
    assert [line for line in lines if line.startswith("a ")] == [
        "a [0:00] resolving", "a [0:10] downloading torch.whl: 39 of 48 MB"]
    assert lines[-1] == "b [0:00] downloading numpy.whl: 1 of 9 MB"


def test_a_cell_that_ends_leaves_and_starts_afresh():
    progress, lines, clock = plain()
    progress.begin("a", "probing")
    clock.now += 90
    progress.end("a")
    progress.begin("a", "probing")
    assert lines[-1] == "a [0:00] probing" and progress.elapsed("a") == 0.0


def test_hostile_activity_text_is_one_short_safe_line():
    progress, lines, _ = plain()
    progress.begin("a", "step 1/2: RUN echo \x1b[2J\rgotcha\nsecond line " + "x" * 500)
    (line,) = lines
    assert "\x1b" not in line and "\r" not in line and "\n" not in line
    assert "\\x1b[2J" in line and len(line) < 130 and line.endswith("…")


def test_rich_draws_live_lines_on_a_terminal_and_prints_messages_above_them():
    stream = io.StringIO()
    stream.isatty = lambda: True  # type: ignore[method-assign]
    progress = progress_for(stream, environ={"TERM": "xterm"})
    assert isinstance(progress, RichProgress)
    progress.begin("cpu-torch2.13.0", "step 3/9: RUN [bold]not markup[/bold]")
    progress.echo("cpu-torch2.13.0: pass [red]x[/red]")
    progress.end("cpu-torch2.13.0")
    progress.close()
    out = stream.getvalue()
    assert "cpu-torch2.13.0: pass [red]x[/red]" in out  # printed as is: foreign text is never markup


@pytest.mark.parametrize("environ, isatty, kind", [
    ({"TERM": "xterm"}, False, Progress),  # a pipe or a file
    ({"TERM": "xterm", "CI": "true"}, True, Progress),  # CI logs get plain lines even with a pseudo-terminal
    ({"TERM": "dumb"}, True, Progress),
    ({"TERM": "xterm", "GPUMATRIX_PROGRESS": "plain"}, True, Progress),
    ({"TERM": "xterm", "GPUMATRIX_PROGRESS": "rich"}, False, RichProgress),
])
def test_plain_lines_unless_on_a_terminal(environ, isatty, kind):
    stream = io.StringIO()
    stream.isatty = lambda: isatty  # type: ignore[method-assign]
    progress = progress_for(stream, environ=environ)
    progress.close()
    assert type(progress) is kind


def test_elapsed_text_has_a_clock_width():
    assert [elapsed_text(s) for s in (0, 9.9, 61, 3599, 3600, 36000)] == [
        "0:00", "0:09", "1:01", "59:59", "1:00:00", "10:00:00"]


def test_the_classic_builders_steps_are_read():
    assert build_step("Step 5/9 : RUN /tmp/install-torch.sh\n") == "step 5/9: RUN /tmp/install-torch.sh"
    assert build_step(" ---> Running in 1234") is None and build_step("Step five") is None


def test_only_the_suites_own_progress_lines_are_read_from_a_containers_stderr():
    line = "gpumatrix-probes: layer 4 math_libraries: math_libraries.matmul_fp32, math_libraries.conv2d"
    assert probe_activity(line) == ("probing layer 4/6 (math libraries): math_libraries.matmul_fp32, "
                                    "math_libraries.conv2d")
    for hostile in ("gpumatrix-probes: layer 4 math_libraries: \x1b[2Jx",  # a control sequence
                    "gpumatrix-probes: layer 9 nine: x",  # no such layer
                    "gpumatrix-probes: layer 4 math_libraries: " + "a" * 3000,  # too long
                    "junk gpumatrix-probes: layer 4 math_libraries: x"):
        assert probe_activity(hostile) is None
    # and they never reach a diagnosis: the stderr tail keeps what the failure said
    tail = _tail(f"{line}\nRuntimeError: CUDA error: no kernel image\n".encode())
    assert tail == "RuntimeError: CUDA error: no kernel image"
