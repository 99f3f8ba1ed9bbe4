package dev.pysandbox.core.runs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pysandbox.Sandboxed;
import dev.pysandbox.TestServices;
import dev.pysandbox.api.ExecutionRequest;
import dev.pysandbox.api.KillReason;
import dev.pysandbox.api.PysandboxException;
import dev.pysandbox.api.RunListener;
import dev.pysandbox.api.RunRecord;
import dev.pysandbox.api.RunStatus;
import dev.pysandbox.core.DefaultSandboxService;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code llm_query(prompt)} in a run's code (issue 26): the question goes over the worker's control
 * channel to the run's {@link RunListener#subcall}, the answer comes back the same way, and nothing
 * the code does with it (bad arguments, a cancel while it waits, frames it forges) harms the server
 * or the session.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class LlmQueryTest {
  @TempDir static Path dataDir;
  static DefaultSandboxService service;
  static String session;

  @BeforeAll
  static void start() {
    service = TestServices.start(dataDir, Map.of("pool_size", "1", "cancel_grace", "5"));
    session = service.createSession(null, null).sessionId();
  }

  @AfterAll
  static void stop() {
    service.close();
  }

  /** A listener whose {@code llm_query} answers are {@code answer}'s; it keeps the prompts. */
  static final class Answering implements RunListener {
    final List<String> prompts = new CopyOnWriteArrayList<>();
    final CompletableFuture<String> runId = new CompletableFuture<>();
    private final Function<String, String> answer;

    Answering(Function<String, String> answer) {
      this.answer = answer;
    }

    @Override
    public void started(String id) {
      runId.complete(id);
    }

    @Override
    public String subcall(String prompt) {
      prompts.add(prompt);
      return answer.apply(prompt);
    }
  }

  private static Answering echo() {
    return new Answering(p -> "echo: " + p);
  }

  private static RunRecord run(String code, RunListener listener) {
    return run(session, code, listener);
  }

  private static RunRecord run(String sessionId, String code, RunListener listener) {
    return service.run(new ExecutionRequest(code, sessionId, null, 30), listener);
  }

  @Test
  void llmQuery_printsTheListenersAnswer() {
    Answering l = echo();
    RunRecord r = run("print(llm_query('hi'))", l);
    assertThat(r.status()).as("%s", r.error()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("echo: hi\n");
    assertThat(l.prompts).containsExactly("hi");
  }

  @Test
  void llmQuery_inALoop_asksOnceEach_inOrder_withUnicodeKept() {
    Answering l = echo();
    RunRecord r = run("for i in range(3):\n    print(llm_query('q%d é ✓ 𝄞' % i))\n", l);
    assertThat(r.status()).as("%s", r.error()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("echo: q0 é ✓ 𝄞\necho: q1 é ✓ 𝄞\necho: q2 é ✓ 𝄞\n");
    assertThat(l.prompts).containsExactly("q0 é ✓ 𝄞", "q1 é ✓ 𝄞", "q2 é ✓ 𝄞");
  }

  @Test
  void llmQuery_fromAThread_isAnsweredWhileTheMainThreadRuns() {
    Answering l = echo();
    RunRecord r =
        run(
            "import threading\n"
                + "out = []\n"
                + "ts = [threading.Thread(target=lambda i=i: out.append(llm_query(str(i))))"
                + " for i in range(3)]\n"
                + "[t.start() for t in ts]; [t.join() for t in ts]\n"
                + "print(sorted(out))",
            l);
    assertThat(r.status()).as("%s", r.error()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("['echo: 0', 'echo: 1', 'echo: 2']\n");
  }

  @Test
  void llmQuery_fromAThreadStillWaitingWhenTheCellEnds_failsThere_andTheNextCellIsServed()
      throws Exception {
    CountDownLatch interrupted = new CountDownLatch(1);
    Answering blocking =
        new Answering(
            p -> {
              try {
                new CountDownLatch(1).await();
              } catch (InterruptedException e) {
                interrupted.countDown();
              }
              return "never";
            });
    RunRecord first =
        run(
            "import threading\n"
                + "got = []\n"
                + "def ask():\n"
                + "    try:\n"
                + "        got.append(llm_query('left behind'))\n"
                + "    except RuntimeError as e:\n"
                + "        got.append(e)\n"
                + "t = threading.Thread(target=ask)\n"
                + "t.start()\n",
            blocking);
    assertThat(first.status()).as("%s", first.error()).isEqualTo(RunStatus.SUCCEEDED);
    RunRecord next = run("t.join(30)\nprint(type(got[0]).__name__)", echo());
    assertThat(next.stdout()).as("%s", next.error()).isEqualTo("RuntimeError\n");
    if (!blocking.prompts.isEmpty()) {
      // It was asked before the cell ended: the server gave up on it with its request.
      assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(run("print(llm_query('next'))", echo()).stdout()).isEqualTo("echo: next\n");
  }

  @Test
  void llmQuery_whenTheListenerThrows_raisesRuntimeErrorWithItsMessage_andTheRunFails() {
    Answering l =
        new Answering(
            p -> {
              throw PysandboxException.invalid("the agent's sub-call budget is spent (3 of 3)");
            });
    RunRecord r = run("x = 1\nllm_query('hi')\n", l);
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("RuntimeError");
    assertThat(r.error().value()).isEqualTo("the agent's sub-call budget is spent (3 of 3)");
    assertThat(r.error().traceback())
        .contains("<cell-")
        .contains("line 2")
        .doesNotContain("runner.py");
    // The code may catch it and go on.
    RunRecord caught =
        run("try:\n    llm_query('hi')\nexcept RuntimeError as e:\n    print('caught', e)\n", l);
    assertThat(caught.stdout()).isEqualTo("caught the agent's sub-call budget is spent (3 of 3)\n");
  }

  @Test
  void llmQuery_inARunThatIsNotAnAgents_raisesRuntimeError() {
    RunRecord r = run("llm_query('hi')", RunListener.NONE);
    assertThat(r.status()).isEqualTo(RunStatus.FAILED);
    assertThat(r.error().name()).isEqualTo("RuntimeError");
    assertThat(r.error().value())
        .startsWith("llm_query is available only in the code of an agent run");
    // A one-shot run too.
    RunRecord oneShot = run(null, "llm_query('hi')", RunListener.NONE);
    assertThat(oneShot.error().value())
        .startsWith("llm_query is available only in the code of an agent run");
  }

  @Test
  void llmQuery_withANonString_raisesTypeError_withoutAsking() {
    Answering l = echo();
    RunRecord r = run("llm_query(b'hi')", l);
    assertThat(r.error().name()).isEqualTo("TypeError");
    assertThat(r.error().value()).contains("str").contains("bytes");
    assertThat(l.prompts).isEmpty();
  }

  @Test
  void llmQuery_withAPromptOver64KiB_raisesValueError_withoutAsking() {
    Answering l = echo();
    RunRecord r = run("llm_query('é' * 40000)", l);
    assertThat(r.error().name()).isEqualTo("ValueError");
    assertThat(r.error().value()).contains("80000 bytes").contains("64 KiB");
    assertThat(l.prompts).isEmpty();
    // 64 KiB exactly, every byte a control character (six bytes each in the frame): answered.
    RunRecord most = run("print(len(llm_query('\\x01' * 65536)))", echo());
    assertThat(most.stdout()).as("%s", most.error()).isEqualTo("65542\n");
  }

  @Test
  void llmQuery_withAnAnswerOver256KiB_raisesRuntimeError_naming_theLimit() {
    RunRecord r = run("llm_query('hi')", new Answering(p -> "a".repeat(256 * 1024 + 1)));
    assertThat(r.error().name()).isEqualTo("RuntimeError");
    assertThat(r.error().value()).contains("256 KiB");
    RunRecord most = run("print(len(llm_query('hi')))", new Answering(p -> "a".repeat(256 * 1024)));
    assertThat(most.stdout()).isEqualTo("262144\n");
  }

  @Test
  void llmQuery_doesNotOutliveTheNamespace_orShowInTheContext() {
    run("x = 1", RunListener.NONE);
    assertThat(service.getContext(session, null).variables()).doesNotContainKey("llm_query");
    service.clearContext(session);
    assertThat(run("print(llm_query('after clear'))", echo()).stdout())
        .isEqualTo("echo: after clear\n");
  }

  @Test
  void cancelRun_whileLlmQueryWaits_cancelsTheRunPromptly_andTheSessionGoesOn() throws Exception {
    CountDownLatch asked = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    Answering blocking =
        new Answering(
            p -> {
              asked.countDown();
              try {
                never.await();
                interrupted.complete(false);
              } catch (InterruptedException e) {
                interrupted.complete(true);
              }
              return "too late";
            });
    CompletableFuture<RunRecord> r =
        CompletableFuture.supplyAsync(() -> run("print('before')\nllm_query('wait')\n", blocking));
    assertThat(asked.await(30, TimeUnit.SECONDS)).isTrue();
    service.cancelRun(blocking.runId.get(10, TimeUnit.SECONDS));
    RunRecord cancelled = r.get(30, TimeUnit.SECONDS);
    assertThat(cancelled.status()).isEqualTo(RunStatus.CANCELLED);
    assertThat(cancelled.message()).contains("stopped by KeyboardInterrupt");
    assertThat(cancelled.stdout()).isEqualTo("before\n");
    // The model call the code waited for is given up on: its thread is interrupted.
    assertThat(interrupted.get(10, TimeUnit.SECONDS)).isTrue();
    never.countDown();
    assertThat(run("print(llm_query('next'))", echo()).stdout()).isEqualTo("echo: next\n");
  }

  /** Python: the runner's control socket and the request in flight's id (the runner's frame). */
  private static final String FORGE =
      "import os, sys\n"
          + "ctl = min(int(f) for f in os.listdir('/proc/self/fd') if int(f) >= 64"
          + " and os.readlink('/proc/self/fd/' + f).startswith('socket:'))\n"
          + "rid = sys._getframe(0).f_back.f_locals['self'].current\n"
          + "def forge(body):\n"
          + "    os.write(ctl, b'\\n{\"id\":\"' + rid.encode() + b'\",\"type\":\"subcall\"'"
          + " + body + b'}\\n')\n";

  @Test
  void forgedSubcallFrames_ofAnotherRequest_areIgnored() {
    Answering l = echo();
    RunRecord r =
        run(
            FORGE
                + "os.write(ctl, b'\\n{\"id\":\"r0000000000000000\",\"type\":\"subcall\","
                + "\"qid\":1,\"prompt\":\"forged\"}\\n')\n"
                + "print(llm_query('real'))",
            l);
    assertThat(r.status()).as("%s", r.error()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).isEqualTo("echo: real\n");
    assertThat(l.prompts).containsExactly("real");
  }

  @Test
  void forgedSubcallFrames_thatTheRunnerNeverSends_cutTheSandboxOff_andTheServerGoesOn() {
    for (String body :
        List.of(
            ",\"prompt\":\"no qid\"",
            ",\"qid\":\"one\",\"prompt\":\"a qid that is not a number\"",
            ",\"qid\":1,\"prompt\":[1,2]",
            ",\"qid\":1,\"prompt\":\"' + b'a' * (65 << 10) + b'\"",
            ",\"qid\":1,\"prompt\":\"' + b'a' * (400 << 10) + b'\"",
            ",\"qid\":1,\"prompt\":\"unterminated")) {
      String s = service.createSession(null, null).sessionId();
      Answering l = echo();
      RunRecord r = run(s, FORGE + "forge(b'" + body + "')\nimport time\ntime.sleep(30)", l);
      assertThat(r.status()).as(body + ": " + r.message()).isEqualTo(RunStatus.FAILED);
      assertThat(r.killReason()).as(body).isEqualTo(KillReason.PROTOCOL_VIOLATION);
      assertThat(r.message()).as(body).contains("llm_query");
      assertThat(l.prompts).as(body).isEmpty();
      service.closeSession(s);
    }
    assertThat(run("print(llm_query('still here'))", echo()).stdout())
        .isEqualTo("echo: still here\n");
  }

  @Test
  void aSecondSubcallWhileOneIsAnswered_isRefusedAtOnce_notQueued() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    Answering slow =
        new Answering(
            p -> {
              if (p.equals("forged")) {
                try {
                  release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
              return "echo: " + p;
            });
    // The forged call holds the one slot (frames are taken in the order they were written); the
    // code's own call is refused, and the code goes on.
    RunRecord r =
        run(
            FORGE
                + "forge(b',\"qid\":1000,\"prompt\":\"forged\"')\n"
                + "try:\n"
                + "    llm_query('second')\n"
                + "except RuntimeError as e:\n"
                + "    print(e)\n",
            slow);
    release.countDown();
    assertThat(r.status()).as("%s", r.error()).isEqualTo(RunStatus.SUCCEEDED);
    assertThat(r.stdout()).contains("one llm_query at a time");
    // The forged call is answered off the hub on the blocking pool: it may reach the listener
    // before the run ends or be cancelled with its request first. The code's own never is queued.
    assertThat(slow.prompts).isSubsetOf("forged");
  }
}
