package interp

import "math"

// attnOpts is an attention variant for the reference implementation.
type attnOpts struct {
	scale   float64
	softcap float64 // 0: none
	window  int     // 0: causal only
	causal  bool
}

// refAttention is a direct implementation of grouped-query softmax
// attention: q is [B, H, S, Dh]; keys(b, g) and vals(b, g) list sequence b's
// key and value vectors of kv head g in position order, the last S of them
// being the new tokens. It returns [B, H, S, Dh].
func refAttention(q *Tensor, G int, keys, vals func(b, g int) [][]float64, o attnOpts) []float64 {
	B, H, S, Dh := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	out := make([]float64, B*H*S*Dh)
	for b := range B {
		for h := range H {
			g := h * G / H
			ks, vs := keys(b, g), vals(b, g)
			tk := len(ks)
			for i := range S {
				qi := q.Data[((b*H+h)*S+i)*Dh:][:Dh]
				qpos := tk - S + i
				var idx []int
				var sc []float64
				for j := range tk {
					if o.causal && j > qpos {
						continue
					}
					if o.window > 0 && j < qpos-o.window+1 {
						continue
					}
					s := dot(qi, ks[j]) * o.scale
					if o.softcap != 0 {
						s = o.softcap * math.Tanh(s/o.softcap)
					}
					idx, sc = append(idx, j), append(sc, s)
				}
				if len(sc) == 0 {
					continue
				}
				mx := sc[0]
				for _, s := range sc {
					mx = math.Max(mx, s)
				}
				z := 0.0
				for _, s := range sc {
					z += math.Exp(s - mx)
				}
				dst := out[((b*H+h)*S+i)*Dh:][:Dh]
				for n, j := range idx {
					p := math.Exp(sc[n]-mx) / z
					for d := range Dh {
						dst[d] += p * vs[j][d]
					}
				}
			}
		}
	}
	return out
}

// contiguousTokens returns, for a contiguous cache kv [2, B, G, T, Dh] and
// new tokens nw [B, G, S, Dh], the vectors of component c (0 keys, 1 values)
// of sequence b, head g: the T cached ones then the S new ones.
func contiguousTokens(kv, nw *Tensor, c int) func(b, g int) [][]float64 {
	return func(b, g int) [][]float64 {
		B, G, T, Dh := kv.Shape[1], kv.Shape[2], kv.Shape[3], kv.Shape[4]
		S := nw.Shape[2]
		var out [][]float64
		for t := range T {
			out = append(out, vec(kv, (((c*B+b)*G+g)*T+t)*Dh, Dh))
		}
		for s := range S {
			out = append(out, vec(nw, ((b*G+g)*S+s)*Dh, Dh))
		}
		return out
	}
}

// pagedTokens decodes a paged pool [P, 2, G, page, Dh] directly from its
// page table, which describes each sequence after the append of the new
// tokens nw [B, G, S, Dh] (FlashInfer's convention): its first len_b - S
// tokens from the pool, then the S new ones. With S = 0 it reads the pool
// as it is.
func pagedTokens(pool, indptr, indices, last, nw *Tensor, c int) func(b, g int) [][]float64 {
	return func(b, g int) [][]float64 {
		G, page, Dh := pool.Shape[2], pool.Shape[3], pool.Shape[4]
		S := nw.Shape[2]
		first, np := int(indptr.Data[b]), int(indptr.Data[b+1]-indptr.Data[b])
		n := 0
		if np > 0 {
			n = (np-1)*page + int(last.Data[b])
		}
		var out [][]float64
		for t := range n - S {
			p := int(indices.Data[first+t/page])
			out = append(out, vec(pool, (((p*2+c)*G+g)*page+t%page)*Dh, Dh))
		}
		for s := range S {
			out = append(out, vec(nw, ((b*G+g)*S+s)*Dh, Dh))
		}
		return out
	}
}

// raggedTokens decodes a ragged buffer [2, G, N, Dh], whose indptr
// describes each sequence after the append of nw: rows indptr[b] ..
// indptr[b+1]-S-1, then the S new tokens.
func raggedTokens(buf, indptr, nw *Tensor, c int) func(b, g int) [][]float64 {
	return func(b, g int) [][]float64 {
		G, N, Dh := buf.Shape[1], buf.Shape[2], buf.Shape[3]
		S := nw.Shape[2]
		var out [][]float64
		for r := int(indptr.Data[b]); r < int(indptr.Data[b+1])-S; r++ {
			out = append(out, vec(buf, ((c*G+g)*N+r)*Dh, Dh))
		}
		for s := range S {
			out = append(out, vec(nw, ((b*G+g)*S+s)*Dh, Dh))
		}
		return out
	}
}

// prefixed puts the shared prefix tokens of a [2, 1, G, L, Dh] state before
// each sequence's tokens.
func prefixed(prefix *Tensor, c int, rest func(b, g int) [][]float64) func(b, g int) [][]float64 {
	return func(b, g int) [][]float64 {
		G, L, Dh := prefix.Shape[2], prefix.Shape[3], prefix.Shape[4]
		var out [][]float64
		for t := range L {
			out = append(out, vec(prefix, ((c*G+g)*L+t)*Dh, Dh))
		}
		return append(out, rest(b, g)...)
	}
}

// refRMSNorm normalises each row of x [..., D] and scales it by w.
func refRMSNorm(x, w []float64, D int, eps float64) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x); r += D {
		ms := 0.0
		for _, v := range x[r : r+D] {
			ms += v * v
		}
		inv := 1 / math.Sqrt(ms/float64(D)+eps)
		for d := range D {
			out[r+d] = x[r+d] * inv * w[d]
		}
	}
	return out
}

// refMatmul multiplies rows of x [..., K] by w [K, N].
func refMatmul(x, w []float64, K, N int) []float64 {
	rows := len(x) / K
	out := make([]float64, rows*N)
	for r := range rows {
		for n := range N {
			s := 0.0
			for k := range K {
				s += x[r*K+k] * w[k*N+n]
			}
			out[r*N+n] = s
		}
	}
	return out
}

// refRope rotates x [B, S, H, Dh] (rotate-half) at positions pos [B, S].
func refRope(x []float64, pos []float64, B, S, H, Dh int, theta float64) []float64 {
	out := make([]float64, len(x))
	half := Dh / 2
	for b := range B {
		for s := range S {
			p := pos[b*S+s]
			for h := range H {
				base := ((b*S+s)*H + h) * Dh
				for i := range half {
					a := p / math.Pow(theta, float64(2*i)/float64(Dh))
					c, sn := math.Cos(a), math.Sin(a)
					x1, x2 := x[base+i], x[base+i+half]
					out[base+i] = x1*c - x2*sn
					out[base+i+half] = x2*c + x1*sn
				}
			}
		}
	}
	return out
}

func refSilu(x float64) float64 { return x / (1 + math.Exp(-x)) }

// refSwiGLU computes (silu(x @ wg) * (x @ wu)) @ wd for a fused
// wgu [D, 2F] holding wg then wu.
func refSwiGLU(x, wgu, wd []float64, D, F int) []float64 {
	gu := refMatmul(x, wgu, D, 2*F)
	rows := len(x) / D
	act := make([]float64, rows*F)
	for r := range rows {
		for f := range F {
			act[r*F+f] = refSilu(gu[r*2*F+f]) * gu[r*2*F+F+f]
		}
	}
	return refMatmul(act, wd, F, D)
}
