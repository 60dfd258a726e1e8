#!/usr/bin/env python3
"""scripts/counters_agreement.py on synthetic probe, names and ncu files: kernels
matched by name and occurrence, picks, the tolerance and its absolute floors,
and the exit status. A CPU test (no GPU, no ncu)."""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "counters_agreement.py")
spec = importlib.util.spec_from_file_location("counters_agreement", SCRIPT)
agreement = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agreement)

DURATION, READ, WRITE, HIT, FFMA = ("gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                    "lts__t_sector_hit_rate.pct", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum")
# Launch order of a step: base name as gpuprof names it, ncu's demangled name, values.
KERNELS = [
    ("rmsnorm_forward_kernel", "void rmsnorm_forward_kernel<__nv_bfloat16, 8>(const float *, int)",
     {DURATION: 5000, READ: 3e6, WRITE: 2e5, HIT: 60, FFMA: 1e6}),
    ("cutlass::device_kernel", "void cutlass::device_kernel<cutlass3x_sm90_bf16_gemm>(Params)",
     {DURATION: 20000, READ: 8e6, WRITE: 4e6, HIT: 80, FFMA: 0}),
    ("rmsnorm_forward_kernel", "void rmsnorm_forward_kernel<__nv_bfloat16, 8>(const float *, int)",
     {DURATION: 5200, READ: 3.1e6, WRITE: 2e5, HIT: 61, FFMA: 1e6}),
    ("transformer::cuda::(anonymous namespace)::adamw_kernel",
     "void transformer::cuda::<unnamed>::adamw_kernel<float>(Buffers<float>, unsigned long)",
     {DURATION: 90000, READ: 1e9, WRITE: 6e8, HIT: 10, FFMA: 2e8}),
]


class Agreement(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def probe(self):
        lines = ["# kernel: chip GH100, 13 pass(es)"]
        lines += [f"kernel,{i},{m},{v}" for i, (_, _, values) in enumerate(KERNELS) for m, v in values.items()]
        return self.write("counters.csv", "\n".join(lines) + "\n")

    def names(self, count=len(KERNELS)):
        lines = [f"name,{i},{base}" for i, (base, _, _) in enumerate(KERNELS[:count])]
        return self.write("names.csv", "# names\n" + "\n".join(lines) + "\n")

    def ncu(self, name, indices, change=None):
        """ncu's CSV of KERNELS[indices], values times change[(index, metric)]."""
        change = change or {}
        rows = ['==PROF== Connected to process 1', '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
        for kernel_id, index in enumerate(indices):
            _, full, values = KERNELS[index]
            for metric, value in values.items():
                rows.append(f'"{kernel_id}","{full}","{metric}","unit","{value * change.get((index, metric), 1):,.3f}"')
        return self.write(name, "\n".join(rows) + "\n")

    def run_script(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = agreement.main(["counters_agreement.py", *args])
        return status, out.getvalue()

    def test_base_names_of_both_tools_compare_equal(self):
        for base, full, _ in KERNELS:
            self.assertEqual(agreement.base_name(full), agreement.base_name(base))
        self.assertEqual(agreement.base_name("void ns::k<(int)8, Op<float>>(float *, int)"), "k")
        # ncu's CSV names an anonymous namespace "unnamed>", in the parameters too.
        self.assertEqual(agreement.base_name(
            "void unnamed>::adamw_kernel<__nv_bfloat16>(AdamWBuffers<T1>, unsigned long, unnamed>::Constants, bool)"),
            "adamw_kernel")

    def test_kernels_match_by_name_and_occurrence_across_files(self):
        # Both rmsnorms and the GEMM in one ncu file, AdamW in another.
        forward = self.ncu("forward.csv", [0, 1, 2], {(2, DURATION): 1.5})
        adamw = self.ncu("adamw.csv", [3])
        status, out = self.run_script(self.probe(), forward, adamw, "--names", self.names(),
                                      "--pick", "RMSNorm=rmsnorm", "--pick", "AdamW=adamw", "--pick", "GEMM=gemm|cutlass")
        # The first rmsnorm is picked, so the second one's 50 % slower duration is not compared.
        self.assertEqual(status, 0, out)
        self.assertIn("RMSNorm: rmsnorm_forward_kernel#0", out)
        self.assertIn("AdamW: adamw_kernel#0", out)
        self.assertIn("GEMM: device_kernel#0", out)  # picked by its namespace, matched by its name
        self.assertIn("3 kernel(s) compared, 0 value(s)", out)
        # Without picks, the second rmsnorm (occurrence 1) is compared with ncu's second one and fails.
        status, out = self.run_script(self.probe(), forward, adamw, "--names", self.names())
        self.assertEqual(status, 1, out)
        self.assertIn("rmsnorm_forward_kernel#1", out)
        self.assertIn("1 value(s) outside", out)

    def test_a_missing_pick_fails(self):
        status, out = self.run_script(self.probe(), self.ncu("f.csv", [0, 1, 2]), "--names", self.names(),
                                      "--pick", "AdamW=adamw")
        self.assertEqual(status, 1)
        self.assertIn("missing: AdamW", out)

    def test_floors_accept_near_zero_values_and_only_them(self):
        # 400 ns of a 5 us kernel (8 %), 0.4 MB more written of 4 MB (10 %), 0.8 points of a 10 % hit rate.
        near = self.ncu("near.csv", [0, 1, 3], {(0, DURATION): 1.08, (1, WRITE): 1.1, (3, HIT): 1.08})
        status, out = self.run_script(self.probe(), near, "--names", self.names())
        self.assertEqual(status, 0, out)
        self.assertEqual(out.count("within floor"), 3, out)
        # 7 % more written of AdamW's 1.6 GB: over 1 MB and over 1 % of its bytes; 2 points of hit rate.
        for change in ({(3, WRITE): 1.07}, {(3, HIT): 1.2}):
            status, out = self.run_script(self.probe(), self.ncu("far.csv", [3], change), "--names", self.names())
            self.assertEqual(status, 1, out)
            self.assertIn("<-- over tolerance", out)
        # Counts have no floor.
        status, out = self.run_script(self.probe(), self.ncu("counts.csv", [0], {(0, FFMA): 1.06}),
                                      "--names", self.names())
        self.assertEqual(status, 1, out)

    def test_run_counts_that_differ_are_bad_input(self):
        status, _ = self.run_script(self.probe(), self.ncu("f.csv", [0]), "--names", self.names(3))
        self.assertEqual(status, 2)
        status, _ = self.run_script(self.probe())
        self.assertEqual(status, 2)
        status, _ = self.run_script(self.probe(), self.ncu("f.csv", [0]), "--pick", "no-equals-sign")
        self.assertEqual(status, 2)

    def test_without_names_kernels_match_in_order(self):
        status, out = self.run_script(self.probe(), self.ncu("all.csv", [0, 1, 2, 3]))
        self.assertEqual(status, 0, out)
        self.assertIn("4 kernel(s) compared, 0 value(s)", out)

    def test_sums_add_up_only_counts_bytes_and_durations(self):
        # ncu measured every kernel; the hit rate (a percentage) does not add up and is left out.
        status, out = self.run_script(self.probe(), self.ncu("all.csv", [0, 1, 2, 3]), "--sum")
        self.assertEqual(status, 0, out)
        self.assertNotIn(HIT, out)
        row = next(line for line in out.splitlines() if WRITE in line)
        self.assertIn(f"{2e5 + 4e6 + 2e5 + 6e8:.6g}", row)
        # 5 % more written in AdamW is 5 % of the total: outside the tolerance and the floors.
        status, out = self.run_script(self.probe(), self.ncu("far.csv", [0, 1, 2, 3], {(3, WRITE): 0.94}), "--sum")
        self.assertEqual(status, 1, out)
        self.assertIn("<-- over tolerance", out)
        status, _ = self.run_script(self.probe(), self.ncu("f.csv", [0]), "--sum", "--names", self.names())
        self.assertEqual(status, 2)

    def test_a_range_compares_with_ncus_range(self):
        values = {DURATION: 1e6, READ: 2e9, WRITE: 1e9, HIT: 55.0}
        probe = self.write("step.csv", "# range: chip GH100, 13 pass(es), 1 range(s)\n" +
                           "".join(f"range,step,{m},{v}\n" for m, v in values.items()))
        rows = ['"ID","Range Name","Metric Name","Metric Unit","Metric Value"']
        rows += [f'"0","range 0","{m}","unit","{v * 1.02:,.3f}"' for m, v in values.items()]
        status, out = self.run_script(probe, self.write("range.csv", "\n".join(rows) + "\n"))
        self.assertEqual(status, 0, out)
        self.assertIn("1 kernel(s) compared, 0 value(s)", out)


if __name__ == "__main__":
    unittest.main()
