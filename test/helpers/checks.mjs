// The pass/fail tally of the scripts CI runs outside tap (bench smoke, container smoke, soak): each check prints
// `ok - ...` or `not ok - ...`, and `summary(name)` prints the `name: N passed, N failed` line .ci/run reads.
let passed = 0;
let failed = 0;

export function check(ok, what) {
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}`);
  if (ok) passed += 1;
  else failed += 1;
}

/** Prints the counts line and returns the exit status. */
export function summary(name) {
  console.log(`${name}: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}
