
/* internal helper macros end with the implementation */
#undef FUSE__PAT_MAX_NODES
#undef FUSE__PAT_MAX_CAPTURES
#undef FUSE__PAT_MAX_ATTRS
#undef FUSE__MATCH_MAX
#undef FUSE__CLAMP
#undef FUSE__BIAS
#undef FUSE__RULES
#undef FUSE__DOT_NAME_MAX
#undef FUSE__CHAIN_LENGTH
#undef FUSE__CHAIN_OPERANDS
#undef FUSE__CHAIN_TILE
#undef FUSE__CHAIN_EACH
#ifdef FUSE__SIMD
#undef FUSE__SIMD
#endif
#undef FUSE__PANEL_BYTES
#ifdef FUSE__COUNTER_ADD
#undef FUSE__COUNTER_ADD
#endif
#undef FUSE__NCHW_GEMM_WEIGHTS
#undef FUSE__NCHW_GEMM_PANEL
#undef FUSE__L1_PANEL
#undef FUSE__PTR_CACHE
#undef FUSE__NCHW_PACK_RUNS
#undef FUSE__ACCUMULATE
#undef FUSE__FINISH
#undef FUSE__GEMM_PREFETCH_STEP
#undef FUSE__WINO_CACHE_BYTES
#undef FUSE__WINO_BLOCK_BYTES
#undef FUSE__WINO_MERGED_COLUMNS
#undef FUSE__FEW_CHANNELS_SEGS
#undef FUSE__FEW_CHANNELS_BUF
#undef FUSE__DWC_BUF
#undef FUSE__UNROLL
#ifdef FUSE__ASAN
#undef FUSE__ASAN
#endif
#undef FUSE__TILE_INLINE
#undef FUSE__ALIGN
#undef FUSE__MAX_DIM
#undef FUSE__MAX_BYTES
#undef FUSE__INLINE_CONST_MAX
#undef FUSE__MAX_PARSE_ATTRS
#ifdef FUSE__X86
#undef FUSE__X86
#endif
#ifdef FUSE__NEON
#undef FUSE__NEON
#endif
