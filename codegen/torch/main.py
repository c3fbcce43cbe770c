def parse_dims(text):
    """B=2,S=1,T=17 as a dict."""
    dims = {}
    for part in filter(None, text.split(",")):
        name, _, count = part.partition("=")
        if name.strip() not in DIMS or not count.strip().lstrip("-").isdigit():
            raise ValueError(f"--dims: {part!r} is not NAME=COUNT of a dim of {LAYER} ({', '.join(DIMS)})")
        dims[name.strip()] = int(count)
    return dims


def bind_dims(t, given):
    """The dims: those given, else those an input's shape shows (a dim that
    is an axis of its own), else the defaults baked in by fuser export."""
    dims = dict(given)
    for name, axis, dim in LEAF_DIMS:
        if dim not in dims and name in t:
            dims[dim] = t[name].shape[axis]
    for dim, count in DEFAULT_DIMS.items():
        dims.setdefault(dim, count)
    missing = [d for d in DIMS if d not in dims]
    if missing:
        raise ValueError(f"bind {', '.join(missing)} with --dims: no input shows them")
    want = declared_shapes(dims)
    for name, shape in want.items():
        if name not in t:
            raise ValueError(f"the inputs hold no tensor {name!r}")
        if shape is not None and list(t[name].shape) != shape:
            raise ValueError(f"{name} has shape {list(t[name].shape)}, the layer's is {shape} at {dims}")
    return dims


def main(argv=None):
    ap = argparse.ArgumentParser(description=f"Runs layer {LAYER} on the tensors of a safetensors file, in float64 (ref64) and in the spec's own dtypes (native).")
    ap.add_argument("inputs", help="safetensors file of the inputs, params and states, named as the spec declares them (a paged or ragged state as its pool or buffer)")
    ap.add_argument("--dims", default="", help="bind the dims, e.g. B=2,S=1,T=17 (default: from the inputs' shapes and the defaults baked in)")
    ap.add_argument("--mode", choices=["ref64", "native", "both"], default="both")
    ap.add_argument("--out", help="prefix of the results, PREFIX.ref64.safetensors and PREFIX.native.safetensors (default: the inputs' path without .safetensors)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args(argv)
    from safetensors.torch import load_file, save_file

    t = load_file(args.inputs, device=args.device)
    try:
        dims = bind_dims(t, parse_dims(args.dims))
    except ValueError as e:
        print(f"{sys.argv[0]}: {e}", file=sys.stderr)
        return 2
    prefix = args.out or args.inputs.removesuffix(".safetensors")
    for mode in ["ref64", "native"] if args.mode == "both" else [args.mode]:
        out = layer(t, dims, mode)
        path = f"{prefix}.{mode}.safetensors"
        save_file({name: x.contiguous() for name, x in out.items()}, path)
        print(f"{LAYER} {mode} at {dims}: {', '.join(out)} in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
