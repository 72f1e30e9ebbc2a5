;; The counter gene: a WASM gene written by hand in WAT. It counts the runs of its agent in the
;; agent's memory (the PATTERN entry "counter/runs", a 3-byte big-endian number) and adds the
;; count to its input object as "runs". It uses the playground's direct ABI (R-RUN-2): the host
;; writes the input JSON at alloc(len) and calls express(ptr, len), which returns a pointer to the
;; NUL-terminated output JSON. Memory calls follow R-WASM: a failed call's envelope
;; {"__rotifer_error":…} is returned as the gene's own output, reporting the failure.
(module
  (import "rotifer" "readMemory"  (func $readMemory  (param i32 i32 i32 i32) (result i32)))
  (import "rotifer" "writeMemory" (func $writeMemory (param i32 i32 i32 i32) (result i32)))
  (import "rotifer" "log"         (func $log         (param i32 i32 i32)))

  ;; 4 pages: constants below 1024, the log line at 1024, host responses at 4096 (60 KiB),
  ;; the input at 65536 (up to 64 KiB), the output at 131072.
  (memory (export "memory") 4)

  (data (i32.const 0)   "{\"key\":\"counter/runs\",\"category\":\"PATTERN\"}")                 ;; 43 bytes
  (data (i32.const 256) "{\"key\":\"counter/runs\",\"value\":\"AAAA\",\"category\":\"PATTERN\"}") ;; 58 bytes, value at 287
  (data (i32.const 512) "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  (data (i32.const 600) "\"value\":\"")                                                     ;; 9 bytes
  (data (i32.const 640) "\"runs\":")                                                        ;; 7 bytes
  (data (i32.const 700) "run ")                                                             ;; 4 bytes
  (data (i32.const 800) "{\"__rotifer_error\":{\"code\":\"INVALID_INPUT\",\"message\":\"counter: the input must be a JSON object\"}}\00")

  (global $RESPONSE i32 (i32.const 4096))
  (global $RESPONSE_CAP i32 (i32.const 61440))
  (global $INPUT i32 (i32.const 65536))
  (global $OUTPUT i32 (i32.const 131072))

  ;; The input always goes at 64 KiB.
  (func (export "alloc") (param $len i32) (result i32) (global.get $INPUT))

  ;; The result of a failed host call: -1 and -4 are passed on as they are; for the others the
  ;; host wrote the error envelope and a NUL at RESPONSE, which becomes the gene's output.
  (func $failed (param $code i32) (result i32)
    (if (result i32) (i32.or (i32.eq (local.get $code) (i32.const -1)) (i32.eq (local.get $code) (i32.const -4)))
      (then (local.get $code))
      (else (global.get $RESPONSE))))

  ;; The 6-bit value of base64 character $c.
  (func $sextet (param $c i32) (result i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.eq (i32.load8_u (i32.add (i32.const 512) (local.get $i))) (local.get $c)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $next (i32.lt_u (local.get $i) (i32.const 64)))))
    (i32.and (local.get $i) (i32.const 63)))

  ;; Four base64 characters at $p as a 24-bit number, and back.
  (func $decode24 (param $p i32) (result i32)
    (i32.or
      (i32.or (i32.shl (call $sextet (i32.load8_u (local.get $p))) (i32.const 18))
              (i32.shl (call $sextet (i32.load8_u offset=1 (local.get $p))) (i32.const 12)))
      (i32.or (i32.shl (call $sextet (i32.load8_u offset=2 (local.get $p))) (i32.const 6))
              (call $sextet (i32.load8_u offset=3 (local.get $p))))))
  (func $encode24 (param $n i32) (param $p i32)
    (i32.store8          (local.get $p) (i32.load8_u offset=512 (i32.and (i32.shr_u (local.get $n) (i32.const 18)) (i32.const 63))))
    (i32.store8 offset=1 (local.get $p) (i32.load8_u offset=512 (i32.and (i32.shr_u (local.get $n) (i32.const 12)) (i32.const 63))))
    (i32.store8 offset=2 (local.get $p) (i32.load8_u offset=512 (i32.and (i32.shr_u (local.get $n) (i32.const 6)) (i32.const 63))))
    (i32.store8 offset=3 (local.get $p) (i32.load8_u offset=512 (i32.and (local.get $n) (i32.const 63)))))

  ;; The offset of the $nlen bytes at $needle in the $len bytes at $p, or -1.
  (func $find (param $p i32) (param $len i32) (param $needle i32) (param $nlen i32) (result i32)
    (local $i i32) (local $j i32)
    (block $none
      (loop $at
        (br_if $none (i32.gt_s (i32.add (local.get $i) (local.get $nlen)) (local.get $len)))
        (local.set $j (i32.const 0))
        (block $differs
          (loop $byte
            (br_if $differs (i32.ne (i32.load8_u (i32.add (local.get $p) (i32.add (local.get $i) (local.get $j))))
                                    (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $byte (i32.lt_u (local.get $j) (local.get $nlen))))
          (return (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const -1))

  ;; Copies $len bytes from $src to $dst; returns $dst + $len.
  (func $copy (param $dst i32) (param $src i32) (param $len i32) (result i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (local.get $dst) (local.get $i)) (i32.load8_u (i32.add (local.get $src) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.add (local.get $dst) (local.get $len)))

  ;; Writes $n in decimal at $p; returns the end.
  (func $decimal (param $n i32) (param $p i32) (result i32)
    (local $digits i32) (local $m i32)
    (local.set $m (local.get $n))
    (loop $count
      (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
      (local.set $m (i32.div_u (local.get $m) (i32.const 10)))
      (br_if $count (local.get $m)))
    (local.set $m (i32.add (local.get $p) (local.get $digits)))
    (loop $write
      (local.set $m (i32.sub (local.get $m) (i32.const 1)))
      (i32.store8 (local.get $m) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $write (i32.gt_u (local.get $m) (local.get $p))))
    (i32.add (local.get $p) (local.get $digits)))

  (func (export "express") (param $ptr i32) (param $len i32) (result i32)
    (local $n i32) (local $runs i32) (local $at i32) (local $close i32) (local $prev i32) (local $end i32)

    ;; The input must be a JSON object: find its closing brace.
    (local.set $close (i32.sub (local.get $len) (i32.const 1)))
    (block $found
      (loop $back
        (br_if $found (i32.lt_s (local.get $close) (i32.const 0)))
        (br_if $found (i32.eq (i32.load8_u (i32.add (local.get $ptr) (local.get $close))) (i32.const 125)))
        (local.set $close (i32.sub (local.get $close) (i32.const 1)))
        (br $back)))
    (if (i32.or (i32.lt_s (local.get $close) (i32.const 1)) (i32.ne (i32.load8_u (local.get $ptr)) (i32.const 123)))
      (then (return (i32.const 800))))

    ;; Read the count: the entry (or null) lands at RESPONSE.
    (local.set $n (call $readMemory (i32.const 0) (i32.const 43) (global.get $RESPONSE) (global.get $RESPONSE_CAP)))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (call $failed (local.get $n)))))
    (local.set $at (call $find (global.get $RESPONSE) (local.get $n) (i32.const 600) (i32.const 9)))
    (if (i32.ge_s (local.get $at) (i32.const 0))
      (then (local.set $runs (call $decode24 (i32.add (global.get $RESPONSE) (i32.add (local.get $at) (i32.const 9)))))))
    (local.set $runs (i32.add (local.get $runs) (i32.const 1)))

    ;; Store the new count.
    (call $encode24 (local.get $runs) (i32.const 287))
    (local.set $n (call $writeMemory (i32.const 256) (i32.const 58) (global.get $RESPONSE) (global.get $RESPONSE_CAP)))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (call $failed (local.get $n)))))

    ;; Log "run N" through the host.
    (local.set $end (call $decimal (local.get $runs) (call $copy (i32.const 1024) (i32.const 700) (i32.const 4))))
    (call $log (i32.const 1) (i32.const 1024) (i32.sub (local.get $end) (i32.const 1024)))

    ;; Output: the input up to its closing brace, then "runs":N (after a comma unless the
    ;; object was empty), the brace and a NUL.
    (local.set $end (call $copy (global.get $OUTPUT) (local.get $ptr) (local.get $close)))
    (local.set $prev (i32.sub (local.get $close) (i32.const 1)))
    (loop $space
      (if (i32.le_u (i32.load8_u (i32.add (local.get $ptr) (local.get $prev))) (i32.const 32))
        (then
          (local.set $prev (i32.sub (local.get $prev) (i32.const 1)))
          (br_if $space (i32.ge_s (local.get $prev) (i32.const 0))))))
    (if (i32.ne (i32.load8_u (i32.add (local.get $ptr) (local.get $prev))) (i32.const 123))
      (then
        (i32.store8 (local.get $end) (i32.const 44))
        (local.set $end (i32.add (local.get $end) (i32.const 1)))))
    (local.set $end (call $decimal (local.get $runs) (call $copy (local.get $end) (i32.const 640) (i32.const 7))))
    (i32.store16 (local.get $end) (i32.const 125))   ;; "}" then NUL
    (global.get $OUTPUT))
)
