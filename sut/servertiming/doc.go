// Package servertiming reads the W3C Server-Timing response header by which a
// network SUT reports how long each stage of a sample took, and maps those
// durations onto loadgen.StageTimes.
//
// A server states durations, not time points, because its clock is not the
// tester's (IN-69). The metric names aimeter understands are the Metric*
// constants (aimeter-dispatch, aimeter-preprocess, aimeter-inference,
// aimeter-postprocess, aimeter-first-token), each with dur in milliseconds:
//
//	Server-Timing: aimeter-dispatch;dur=1, aimeter-inference;dur=30, aimeter-first-token;dur=31
//
// Parse reads header values with the W3C grammar and counts malformed
// metrics instead of failing; Format writes metrics back; FromMetrics lays the
// stage durations end to end on the SUT's clock (loadgen.SUTClock) from
// t_ITR = 0, so that package gbt computes T_DIS, T_IPR, T_IN, T_IPO, T_IP and
// T_ftoken from them (GB-7.6.2); ParseStages does both steps.
package servertiming
