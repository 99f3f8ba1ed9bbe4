package dev.pysandbox.api;

/**
 * An exception raised by user code, as Jupyter reports it.
 *
 * @param name the exception's type name ({@code ZeroDivisionError}, {@code json.JSONDecodeError})
 * @param value its message
 * @param traceback the formatted traceback, pointing at the user's cell lines, never the runner's
 */
public record ErrorInfo(String name, String value, String traceback) {}
