package dev.pysandbox.http.rest;

/**
 * The configuration the REST routes need.
 *
 * @param uploadMaxBytes the largest file an upload writes ({@code upload_max_bytes})
 * @param codeMaxBytes the largest code a run takes ({@code code_max_bytes}); a JSON body may be 1
 *     MiB more
 * @param resultOutputLimit bytes of stdout and of stderr a POST /runs answer carries ({@code
 *     result_output_limit})
 */
record RestLimits(long uploadMaxBytes, int codeMaxBytes, int resultOutputLimit) {
  /** What a multipart form may add to its file: boundaries and part headers. */
  static final long FORM_OVERHEAD_BYTES = 64 * 1024;

  RestLimits {
    if (uploadMaxBytes < 1 || codeMaxBytes < 1 || resultOutputLimit < 0) {
      throw new IllegalArgumentException(
          "upload_max_bytes "
              + uploadMaxBytes
              + ", code_max_bytes "
              + codeMaxBytes
              + ", result_output_limit "
              + resultOutputLimit);
    }
  }

  /** The largest JSON body: the code at its largest and 1 MiB for the rest. */
  long jsonBodyMaxBytes() {
    return codeMaxBytes + (1L << 20);
  }

  /** The largest body of any route: an upload's form or a JSON body. */
  long maxBodyBytes() {
    return Math.max(jsonBodyMaxBytes(), uploadMaxBytes + FORM_OVERHEAD_BYTES);
  }
}
