package dev.pysandbox.http;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;

/**
 * Runs something once a request's asynchronous answer is complete (an SSE stream, a streamed run):
 * what the filters that count a request (in flight, in its caller's slots, watched for a slow peer)
 * do at the end of an answer that outlives its filter chain.
 */
final class AsyncDone implements AsyncListener {
  private final Runnable onComplete;

  AsyncDone(Runnable onComplete) {
    this.onComplete = onComplete;
  }

  @Override
  public void onComplete(AsyncEvent event) {
    onComplete.run();
  }

  @Override
  public void onTimeout(AsyncEvent event) {
    // completed afterwards, by whoever started it
  }

  @Override
  public void onError(AsyncEvent event) {
    // completed afterwards, by whoever started it
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // nothing yet
  }
}
