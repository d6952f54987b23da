"""`check`'s steps: prove every example of a generated library works, stage by stage.

1. model check (`model_check.py`), no toolchain needed;
2. compile for the UNO Q (`compile.py` with the sources of `plan.py`, back ends in
   `backends.py` on the shared compilers of `generator/toolchain/`: `gcc.py`, objects
   cached by content in `objcache.py`);
3. sizes like arduino-cli's report (`sizes.py`), and the Dynamic link (the IDE's default
   link mode) with its sizes (`dynamic.py`), both linked as arduino-cli links (`link.py`);
4. run on an emulated Cortex-M33 (QEMU mps2-an505) and once on the host under
   AddressSanitizer + UBSan, compared with the example's expected.yaml (`run_sketch.py`);
5. the method arena measured in the emulated run (`arena.py`).

The runner is `generator.check.run` (`run_check`), which returns a
`CheckReport` (`report.py`) with the Markdown and JSON forms.
"""
