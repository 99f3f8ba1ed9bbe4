package dev.pysandbox.api;

import java.util.List;

/** What {@code list_sessions} returns: the open sessions, oldest first. */
public record SessionList(List<SessionInfo> sessions) {}
