package cuda

// The tensor-core GEMV on sm_90a (device/gemv_wgmma.cuh, fz_gemv_wg_tile),
// which the launch asks for (plan.Launch.WGMMA): the mma.sync GEMV's tile,
// zero fills and cp.async ring, with plan.GemvWGStages stages in wgmma's
// canonical layouts, and each of the block's two warpgroups taking half
// the tile's columns over every position of a stage, so that the sums
// need no reduction between warps. A stage's wgmmas run while the next
// stage is waited for and its copies issued: a stage is refilled two
// steps after it was read (GemvWGStages - 2 stages in flight), once the
// wgmma wait of the step between has retired it.

// gemvWGMMA reports whether the kernel's tensor-core GEMV issues wgmma.
func (g *gemmModel) gemvWGMMA() bool {
	l := g.k.pk.Launch
	return g.gemvMMA() && l != nil && l.WGMMA
}
