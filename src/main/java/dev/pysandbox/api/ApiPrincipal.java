package dev.pysandbox.api;

/**
 * Who is calling, once an API key is accepted: the key that was presented (by its public id) and
 * the tenant the call acts for.
 */
public record ApiPrincipal(String keyId, String tenant) {}
