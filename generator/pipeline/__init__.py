"""`build`'s steps: generate the Arduino library from an ExecuTorch ref, in the order
`generator.pipeline.run` (`build_library`) runs them, one module each:

1. check out ExecuTorch at the ref into the cache (`generator/vcs/checkout.py`), read its
   version (`sources.py`) and plan the examples' models (`examples.py`);
2. check out each third-party component at the commit that tree pins
   (`sources.check_out_third_party`, with what each component is from
   `data/vendored/*.yaml`: `components.py`);
3. generate the program reader, flatc's Python for the ref's schema (`reader.py`);
4. select the op set (`opset.py`; `--ops-from-pte` read with `models.py`);
5. run the ref's kernel-registration codegen for it (`codegen.py`);
6. vendor every component's sources and the headers they include (`vendor.vendor_sources`),
   with the old cores' compiler check (`board_check.py`) and the compact runtime's header of
   the boards with little flash (`compact.py`);
7. generate the schema headers with a flatc of the pinned version (`flatc.py`);
8. apply the Arduino patches (`patches.py`);
9. select the kernels' dtypes (`dtypes.py`);
10. split the kernel registration per operator (`selection.py`);
11. write the examples (`examples.py`, with the board-fit blocks of `fit.py`);
12. ship only the sources the shipped code links (`prune.py`, compiled with `toolchain/`);
13. check the models against the library (`models.model_check`);
14. gather one `Provenance` from the steps' results (`provenance.gather_provenance`) and
    render the metadata from it (`render.py`).

Each step returns a small frozen result. The library is built in a staging folder beside
`--out` and moved into place only when every step succeeded (`generator/pipeline/output.py`);
the cache folders the steps use, and their locks, are `generator/util/cache.py`'s. The
command line's `build` is `generator/cli/build.py`. Nothing here imports `check`, `sync` or
`cli`: they run the build, not the other way round.
"""
