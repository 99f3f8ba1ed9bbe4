package dev.pysandbox.worker;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;

/**
 * Told about one request's output as it arrives, so that it can be shown live. Called on the hub's
 * one thread, which serves every sandbox: it must return at once and must not keep the buffer.
 */
public interface RequestListener {
  RequestListener NONE =
      new RequestListener() {
        @Override
        public void output(boolean stderr, ByteBuffer bytes) {}

        @Override
        public void display(ObjectNode bundle, long frameBytes) {}
      };

  /**
   * Bytes the code wrote to stdout (or stderr) while the request ran, as read: not split at lines
   * nor at UTF-8 characters. The buffer is the hub's: read it now, do not keep it.
   */
  void output(boolean stderr, ByteBuffer bytes);

  /**
   * A MIME bundle the code displayed (taken into the request's answer as well).
   *
   * @param frameBytes the size of the frame that carried it
   */
  void display(ObjectNode bundle, long frameBytes);
}
