"""safetensors.torch's load_file and save_file for the tests: the same
file format (an 8-byte little-endian header length, a JSON header naming
each tensor's dtype, shape and byte range, then the bytes), written plainly."""
import json
import struct

import torch

_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64,
           "I32": torch.int32, "I64": torch.int64, "U8": torch.uint8, "BOOL": torch.bool}
_NAMES = {d: n for n, d in _DTYPES.items()}


def load_file(filename, device="cpu"):
    with open(filename, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    out = {}
    for name, e in json.loads(data[8 : 8 + n]).items():
        if name == "__metadata__":
            continue
        lo, hi = e["data_offsets"]
        dtype = _DTYPES[e["dtype"]]
        if hi == lo:
            out[name] = torch.empty(e["shape"], dtype=dtype, device=device)
            continue
        flat = torch.frombuffer(bytearray(data[8 + n + lo : 8 + n + hi]), dtype=dtype)
        out[name] = flat.reshape(e["shape"]).to(device)
    return out


def save_file(tensors, filename):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    js = json.dumps(header).encode()
    js += b" " * (-len(js) % 8)
    with open(filename, "wb") as f:
        f.write(struct.pack("<Q", len(js)) + js + b"".join(blobs))
