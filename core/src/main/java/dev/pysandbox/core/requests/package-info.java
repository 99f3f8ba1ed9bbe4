/**
 * What a call brings with it, checked before anything is made for it: the rules that depend on the
 * configuration ({@link dev.pysandbox.core.requests.RequestValidator}) and the request id a face
 * put in the logging context ({@link dev.pysandbox.core.requests.RequestIds}). It uses the api,
 * config and packages only.
 */
package dev.pysandbox.core.requests;
