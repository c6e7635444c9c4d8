;; Dot products of one query with int8 rows for the IVF search (src/search/ivf.ts): the same sums in
;; the same order as `dot` in src/search/int8.ts (four running sums over the lanes i % 4, in double
;; precision, added as ((a + b) + c) + d), so every score is bit for bit the one JavaScript computes;
;; two lanes at a time (SIMD: about twice as fast as the JavaScript loop).
;; Compiled into src/search/dots-wasm.ts by `npm run wasm:build` (wabt); a test checks the two agree.
;; Memory is laid out by the caller: q as float64 (dims), rows as int8 (n * dims), out as float64 (n).
(module
  (memory (export "memory") 1)
  ;; out[r] = q . rows[r], for r in [0, n)
  (func (export "dots") (param $q i32) (param $rows i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $r i32) (local $o i32) (local $i i32) (local $qi i32)
    (local $ab v128) (local $cd v128) (local $v v128) (local $h v128) (local $w v128)
    (local $a f64) (local $b f64) (local $c f64) (local $d f64)
    (block $rows_done
      (loop $each_row
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $n)))
        (local.set $o (i32.add (local.get $rows) (i32.mul (local.get $r) (local.get $dims))))
        (local.set $ab (v128.const f64x2 0 0))
        (local.set $cd (v128.const f64x2 0 0))
        (local.set $i (i32.const 0))
        ;; 16 at a time: lanes (0,1) of each 4 into $ab, (2,3) into $cd
        (block $simd_done
          (loop $simd
            (br_if $simd_done (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $dims)))
            (local.set $v (v128.load (i32.add (local.get $o) (local.get $i))))
            (local.set $qi (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 3))))
            ;; elements 0..7
            (local.set $h (i16x8.extend_low_i8x16_s (local.get $v)))
            (local.set $w (i32x4.extend_low_i16x8_s (local.get $h)))
            (local.set $ab (f64x2.add (local.get $ab) (f64x2.mul (v128.load offset=0 (local.get $qi)) (f64x2.convert_low_i32x4_s (local.get $w)))))
            (local.set $cd (f64x2.add (local.get $cd) (f64x2.mul (v128.load offset=16 (local.get $qi))
              (f64x2.convert_low_i32x4_s (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $w) (local.get $w))))))
            (local.set $w (i32x4.extend_high_i16x8_s (local.get $h)))
            (local.set $ab (f64x2.add (local.get $ab) (f64x2.mul (v128.load offset=32 (local.get $qi)) (f64x2.convert_low_i32x4_s (local.get $w)))))
            (local.set $cd (f64x2.add (local.get $cd) (f64x2.mul (v128.load offset=48 (local.get $qi))
              (f64x2.convert_low_i32x4_s (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $w) (local.get $w))))))
            ;; elements 8..15
            (local.set $h (i16x8.extend_high_i8x16_s (local.get $v)))
            (local.set $w (i32x4.extend_low_i16x8_s (local.get $h)))
            (local.set $ab (f64x2.add (local.get $ab) (f64x2.mul (v128.load offset=64 (local.get $qi)) (f64x2.convert_low_i32x4_s (local.get $w)))))
            (local.set $cd (f64x2.add (local.get $cd) (f64x2.mul (v128.load offset=80 (local.get $qi))
              (f64x2.convert_low_i32x4_s (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $w) (local.get $w))))))
            (local.set $w (i32x4.extend_high_i16x8_s (local.get $h)))
            (local.set $ab (f64x2.add (local.get $ab) (f64x2.mul (v128.load offset=96 (local.get $qi)) (f64x2.convert_low_i32x4_s (local.get $w)))))
            (local.set $cd (f64x2.add (local.get $cd) (f64x2.mul (v128.load offset=112 (local.get $qi))
              (f64x2.convert_low_i32x4_s (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $w) (local.get $w))))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $simd)))
        (local.set $a (f64x2.extract_lane 0 (local.get $ab)))
        (local.set $b (f64x2.extract_lane 1 (local.get $ab)))
        (local.set $c (f64x2.extract_lane 0 (local.get $cd)))
        (local.set $d (f64x2.extract_lane 1 (local.get $cd)))
        ;; 4 at a time, then one at a time into a (as the JavaScript loop does)
        (block $four_done
          (loop $four
            (br_if $four_done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $dims)))
            (local.set $qi (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 3))))
            (local.set $a (f64.add (local.get $a) (f64.mul (f64.load offset=0 (local.get $qi))
              (f64.convert_i32_s (i32.load8_s offset=0 (i32.add (local.get $o) (local.get $i)))))))
            (local.set $b (f64.add (local.get $b) (f64.mul (f64.load offset=8 (local.get $qi))
              (f64.convert_i32_s (i32.load8_s offset=1 (i32.add (local.get $o) (local.get $i)))))))
            (local.set $c (f64.add (local.get $c) (f64.mul (f64.load offset=16 (local.get $qi))
              (f64.convert_i32_s (i32.load8_s offset=2 (i32.add (local.get $o) (local.get $i)))))))
            (local.set $d (f64.add (local.get $d) (f64.mul (f64.load offset=24 (local.get $qi))
              (f64.convert_i32_s (i32.load8_s offset=3 (i32.add (local.get $o) (local.get $i)))))))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (br $four)))
        (block $one_done
          (loop $one
            (br_if $one_done (i32.ge_u (local.get $i) (local.get $dims)))
            (local.set $a (f64.add (local.get $a) (f64.mul (f64.load (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 3))))
              (f64.convert_i32_s (i32.load8_s (i32.add (local.get $o) (local.get $i)))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $one)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 3)))
          (f64.add (f64.add (f64.add (local.get $a) (local.get $b)) (local.get $c)) (local.get $d)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each_row))))
)
