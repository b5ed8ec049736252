"""Code catalogues of widely deployed systems the hand vocabulary lacked, typed from their official documentation.

Read by tools/mine_exceptions.py, which writes them into `_shared/mined_vocabulary.json` with
their source. Each entry: the words a text shows (as `words_of` cuts them: `ORA-00942` is
`ora 00942`), the kind, and the documented message (also training text for the word model).
Where a library ships the table itself, the miner reads it from the library instead (sysexits
from Python's `os.EX_*`); these are the tables no installed library carries.
"""

from __future__ import annotations

ORACLE = "Oracle Database Error Messages (docs.oracle.com/en/error-help/db/)"
SQL_SERVER = "SQL Server database engine errors (learn.microsoft.com/sql/relational-databases/errors-events)"
MONGODB = "MongoDB error codes (mongodb.com/docs/manual/reference/error-codes/, src/mongo/base/error_codes.yml)"
ELASTICSEARCH = "Elasticsearch exception types (elastic.co/guide/en/elasticsearch/reference, ElasticsearchException)"
NPM = "npm error codes (docs.npmjs.com/common-errors, npm/cli lib/utils/error-message.js)"
CURL = "curl exit codes (curl.se/docs/manpage.html#EXIT-CODES, curl.se/libcurl/c/libcurl-errors.html)"
SYSEXITS = "sysexits.h (FreeBSD/glibc), as Python's os.EX_* constants"

# (catalogue, phrase, kind, documented message)
CATALOGUES: tuple[tuple[str, str, str, str], ...] = (
    # --- Oracle ---
    (ORACLE, "ora 00001", "CONFLICT", "unique constraint violated"),
    (ORACLE, "ora 00054", "DATABASE_BUSY", "resource busy and acquire with NOWAIT specified or timeout expired"),
    (ORACLE, "ora 00060", "DATABASE_BUSY", "deadlock detected while waiting for resource"),
    (ORACLE, "ora 00904", "INVALID_QUERY", "invalid identifier"),
    (ORACLE, "ora 00900", "INVALID_QUERY", "invalid SQL statement"),
    (ORACLE, "ora 00933", "INVALID_QUERY", "SQL command not properly ended"),
    (ORACLE, "ora 00936", "INVALID_QUERY", "missing expression"),
    (ORACLE, "ora 00942", "INVALID_QUERY", "table or view does not exist"),
    (ORACLE, "ora 01017", "NOT_AUTHENTICATED", "invalid username/password; logon denied"),
    (ORACLE, "ora 01031", "ACCESS_DENIED", "insufficient privileges"),
    (ORACLE, "ora 01400", "INVALID_ARGUMENTS", "cannot insert NULL into"),
    (ORACLE, "ora 01722", "INVALID_ARGUMENTS", "invalid number"),
    (ORACLE, "ora 01861", "INVALID_ARGUMENTS", "literal does not match format string"),
    (ORACLE, "ora 12899", "INVALID_ARGUMENTS", "value too large for column"),
    (ORACLE, "ora 02291", "CONFLICT", "integrity constraint violated - parent key not found"),
    (ORACLE, "ora 02292", "CONFLICT", "integrity constraint violated - child record found"),
    (ORACLE, "ora 01653", "SERVER_MISCONFIGURED", "unable to extend table by 8 in tablespace"),
    (ORACLE, "ora 01555", "DATABASE_BUSY", "snapshot too old: rollback segment number too small"),
    (ORACLE, "ora 08177", "DATABASE_BUSY", "can't serialize access for this transaction"),
    (ORACLE, "ora 04031", "SERVER_RESOURCES_EXHAUSTED", "unable to allocate bytes of shared memory"),
    (ORACLE, "ora 12154", "NOT_FOUND", "TNS:could not resolve the connect identifier specified"),
    (ORACLE, "ora 12170", "UPSTREAM_TIMEOUT", "TNS:Connect timeout occurred"),
    (ORACLE, "ora 12514", "UPSTREAM_UNAVAILABLE", "TNS:listener does not currently know of service requested"),
    (ORACLE, "ora 12519", "UPSTREAM_UNAVAILABLE", "TNS:no appropriate service handler found"),
    (ORACLE, "ora 12541", "UPSTREAM_UNAVAILABLE", "TNS:no listener"),
    (ORACLE, "ora 12543", "UPSTREAM_UNAVAILABLE", "TNS:destination host unreachable"),
    (ORACLE, "ora 03113", "UPSTREAM_CONNECTION_LOST", "end-of-file on communication channel"),
    (ORACLE, "ora 03114", "UPSTREAM_CONNECTION_LOST", "not connected to ORACLE"),
    (ORACLE, "ora 03135", "UPSTREAM_CONNECTION_LOST", "connection lost contact"),
    (ORACLE, "ora 28000", "NOT_AUTHENTICATED", "the account is locked"),
    (ORACLE, "ora 28001", "NOT_AUTHENTICATED", "the password has expired"),
    (ORACLE, "ora 01034", "UPSTREAM_UNAVAILABLE", "ORACLE not available"),
    (ORACLE, "ora 01033", "UPSTREAM_UNAVAILABLE", "ORACLE initialization or shutdown in progress"),
    (ORACLE, "ora 00018", "DATABASE_BUSY", "maximum number of sessions exceeded"),
    (ORACLE, "ora 00020", "DATABASE_BUSY", "maximum number of processes exceeded"),
    (ORACLE, "ora 01013", "UPSTREAM_TIMEOUT", "user requested cancel of current operation"),
    (ORACLE, "ora 00600", "UPSTREAM_INTERNAL_ERROR", "internal error code, arguments"),
    (ORACLE, "ora 01476", "INVALID_QUERY", "divisor is equal to zero"),
    (ORACLE, "ora 06550", "INVALID_QUERY", "line, column: PL/SQL compilation error"),
    (ORACLE, "ora 00955", "CONFLICT", "name is already used by an existing object"),
    # --- SQL Server ---
    (SQL_SERVER, "msg 18456", "NOT_AUTHENTICATED", "Login failed for user"),
    (SQL_SERVER, "login failed for user", "NOT_AUTHENTICATED", "Login failed for user"),
    (SQL_SERVER, "msg 1205", "DATABASE_BUSY", "Transaction was deadlocked on lock resources with another process "
     "and has been chosen as the deadlock victim. Rerun the transaction."),
    (SQL_SERVER, "chosen as the deadlock victim", "DATABASE_BUSY", "has been chosen as the deadlock victim"),
    (SQL_SERVER, "msg 1222", "DATABASE_BUSY", "Lock request time out period exceeded."),
    (SQL_SERVER, "msg 2627", "CONFLICT", "Violation of PRIMARY KEY constraint. Cannot insert duplicate key in object."),
    (SQL_SERVER, "msg 2601", "CONFLICT", "Cannot insert duplicate key row in object with unique index."),
    (SQL_SERVER, "cannot insert duplicate key", "CONFLICT", "Cannot insert duplicate key row in object"),
    (SQL_SERVER, "msg 547", "CONFLICT", "The INSERT statement conflicted with the FOREIGN KEY constraint."),
    (SQL_SERVER, "msg 515", "INVALID_ARGUMENTS", "Cannot insert the value NULL into column; column does not allow "
     "nulls."),
    (SQL_SERVER, "msg 208", "INVALID_QUERY", "Invalid object name"),
    (SQL_SERVER, "invalid object name", "INVALID_QUERY", "Invalid object name"),
    (SQL_SERVER, "msg 207", "INVALID_QUERY", "Invalid column name"),
    (SQL_SERVER, "invalid column name", "INVALID_QUERY", "Invalid column name"),
    (SQL_SERVER, "msg 102", "INVALID_QUERY", "Incorrect syntax near"),
    (SQL_SERVER, "incorrect syntax near", "INVALID_QUERY", "Incorrect syntax near"),
    (SQL_SERVER, "msg 229", "ACCESS_DENIED", "The SELECT permission was denied on the object"),
    (SQL_SERVER, "msg 4060", "SERVER_MISCONFIGURED", "Cannot open database requested by the login. The login failed."),
    (SQL_SERVER, "msg 8152", "INVALID_ARGUMENTS", "String or binary data would be truncated."),
    (SQL_SERVER, "msg 245", "INVALID_ARGUMENTS", "Conversion failed when converting the varchar value to data type "
     "int."),
    (SQL_SERVER, "msg 8134", "INVALID_QUERY", "Divide by zero error encountered."),
    (SQL_SERVER, "msg 40501", "UPSTREAM_UNAVAILABLE", "The service is currently busy. Retry the request after 10 "
     "seconds."),
    (SQL_SERVER, "msg 40613", "UPSTREAM_UNAVAILABLE", "Database on server is not currently available. Please retry "
     "the connection later."),
    (SQL_SERVER, "msg 49918", "UPSTREAM_UNAVAILABLE", "Cannot process request. Not enough resources to process "
     "request. Please retry later."),
    # --- MongoDB code names ---
    (MONGODB, "writeconflict", "DATABASE_BUSY", "Write conflict during plan execution. Please retry your operation "
     "or multi-document transaction."),
    (MONGODB, "transienttransactionerror", "DATABASE_BUSY", "A transient transaction error: retry the transaction."),
    (MONGODB, "locktimeout", "DATABASE_BUSY", "Unable to acquire lock within the time limit"),
    (MONGODB, "duplicatekey", "CONFLICT", "E11000 duplicate key error collection"),
    (MONGODB, "e11000", "CONFLICT", "E11000 duplicate key error collection"),
    (MONGODB, "namespaceexists", "CONFLICT", "Collection already exists"),
    (MONGODB, "documentvalidationfailure", "INVALID_ARGUMENTS", "Document failed validation"),
    (MONGODB, "badvalue", "INVALID_ARGUMENTS", "bad value"),
    (MONGODB, "failedtoparse", "INVALID_ARGUMENTS", "failed to parse"),
    (MONGODB, "typemismatch", "INVALID_ARGUMENTS", "type mismatch"),
    (MONGODB, "invalidnamespace", "INVALID_ARGUMENTS", "Invalid namespace specified"),
    (MONGODB, "invalidoptions", "INVALID_ARGUMENTS", "invalid options"),
    (MONGODB, "namespacenotfound", "NOT_FOUND", "ns not found"),
    (MONGODB, "indexnotfound", "NOT_FOUND", "index not found with name"),
    (MONGODB, "cursornotfound", "NOT_FOUND", "cursor id not found"),
    (MONGODB, "commandnotfound", "INVALID_ARGUMENTS", "no such command"),
    (MONGODB, "unauthorized", "ACCESS_DENIED", "not authorized on db to execute command"),
    (MONGODB, "authenticationfailed", "NOT_AUTHENTICATED", "Authentication failed."),
    (MONGODB, "exceededtimelimit", "UPSTREAM_TIMEOUT", "operation exceeded time limit"),
    (MONGODB, "maxtimemsexpired", "UPSTREAM_TIMEOUT", "operation exceeded time limit"),
    (MONGODB, "networktimeout", "UPSTREAM_TIMEOUT", "network timeout"),
    (MONGODB, "hostunreachable", "UPSTREAM_UNAVAILABLE", "host unreachable"),
    (MONGODB, "hostnotfound", "NOT_FOUND", "host not found"),
    (MONGODB, "notwritableprimary", "UPSTREAM_UNAVAILABLE", "not primary: retry on the new primary"),
    (MONGODB, "primarysteppeddown", "UPSTREAM_UNAVAILABLE", "primary stepped down while waiting for replication"),
    (MONGODB, "shutdowninprogress", "UPSTREAM_UNAVAILABLE", "shutdown in progress"),
    (MONGODB, "interruptedatshutdown", "UPSTREAM_UNAVAILABLE", "interrupted at shutdown"),
    (MONGODB, "serverselectiontimeouterror", "UPSTREAM_UNAVAILABLE", "No servers found yet, Timeout"),
    (MONGODB, "illegaloperation", "POLICY_REFUSED", "illegal operation"),
    (MONGODB, "exceededmemorylimit", "POLICY_REFUSED", "Exceeded memory limit for $group"),
    # --- Elasticsearch exception types ---
    (ELASTICSEARCH, "index not found exception", "NOT_FOUND", "no such index"),
    (ELASTICSEARCH, "resource not found exception", "NOT_FOUND", "resource not found"),
    (ELASTICSEARCH, "document missing exception", "NOT_FOUND", "document missing"),
    (ELASTICSEARCH, "resource already exists exception", "CONFLICT", "index already exists"),
    (ELASTICSEARCH, "version conflict engine exception", "CONFLICT", "version conflict, document already exists "
     "(current version)"),
    (ELASTICSEARCH, "parsing exception", "INVALID_QUERY", "unknown query"),
    (ELASTICSEARCH, "x content parse exception", "INVALID_ARGUMENTS", "failed to parse"),
    (ELASTICSEARCH, "query shard exception", "INVALID_QUERY", "failed to create query"),
    (ELASTICSEARCH, "search phase execution exception", "INVALID_QUERY", "all shards failed"),
    (ELASTICSEARCH, "illegal argument exception", "INVALID_ARGUMENTS", "illegal argument"),
    (ELASTICSEARCH, "mapper parsing exception", "INVALID_ARGUMENTS", "failed to parse field"),
    (ELASTICSEARCH, "action request validation exception", "INVALID_ARGUMENTS", "Validation Failed"),
    (ELASTICSEARCH, "security exception", "ACCESS_DENIED", "action is unauthorized for user"),
    (ELASTICSEARCH, "es rejected execution exception", "UPSTREAM_RATE_LIMITED", "rejected execution: queue "
     "capacity reached"),
    (ELASTICSEARCH, "circuit breaking exception", "UPSTREAM_RATE_LIMITED", "Data too large, data would be larger "
     "than limit"),
    (ELASTICSEARCH, "no shard available action exception", "UPSTREAM_UNAVAILABLE", "no shard available"),
    (ELASTICSEARCH, "master not discovered exception", "UPSTREAM_UNAVAILABLE", "master not discovered"),
    (ELASTICSEARCH, "node not connected exception", "UPSTREAM_UNAVAILABLE", "node not connected"),
    (ELASTICSEARCH, "process cluster event timeout exception", "UPSTREAM_TIMEOUT", "failed to process cluster event "
     "within timeout"),
    (ELASTICSEARCH, "cluster block exception", "SERVER_MISCONFIGURED", "index read-only / allow delete (api)"),
    # --- npm ---
    (NPM, "e404", "NOT_FOUND", "404 Not Found - is not in this registry."),
    (NPM, "etarget", "NOT_FOUND", "No matching version found for package"),
    (NPM, "enoversions", "NOT_FOUND", "No versions available for package"),
    (NPM, "eresolve", "CONFLICT", "unable to resolve dependency tree"),
    (NPM, "eintegrity", "SERVER_MISCONFIGURED", "sha512 integrity checksum failed"),
    (NPM, "eneedauth", "NOT_AUTHENTICATED", "need auth: This command requires you to be logged in."),
    (NPM, "e401", "NOT_AUTHENTICATED", "Unable to authenticate, need: Basic realm"),
    (NPM, "e403", "ACCESS_DENIED", "403 Forbidden"),
    (NPM, "eotp", "NOT_AUTHENTICATED", "This operation requires a one-time password"),
    (NPM, "ebadengine", "POLICY_REFUSED", "Unsupported engine"),
    (NPM, "ebadplatform", "POLICY_REFUSED", "Unsupported platform"),
    (NPM, "ejsonparse", "INVALID_ARGUMENTS", "JSON.parse Failed to parse json"),
    (NPM, "eusage", "INVALID_ARGUMENTS", "Usage: npm <command>"),
    (NPM, "elifecycle", "UPSTREAM_INTERNAL_ERROR", "Failed at the script"),
    (NPM, "e429", "UPSTREAM_RATE_LIMITED", "429 Too Many Requests"),
    (NPM, "e500", "UPSTREAM_INTERNAL_ERROR", "500 Internal Server Error"),
    (NPM, "e502", "UPSTREAM_BAD_GATEWAY", "502 Bad Gateway"),
    (NPM, "e503", "UPSTREAM_UNAVAILABLE", "503 Service Unavailable"),
    (NPM, "epublishconflict", "CONFLICT", "Cannot publish over existing version"),
    (NPM, "enotempty", "CONFLICT", "directory not empty"),
    (NPM, "enotsup", "POLICY_REFUSED", "Unsupported"),
    # --- curl exit codes (curl: (N) ...) and their libcurl names ---
    (CURL, "curl 1", "INVALID_ARGUMENTS", "Unsupported protocol. This build of curl has no support for this "
     "protocol."),
    (CURL, "curl 3", "INVALID_ARGUMENTS", "URL malformed. The syntax was not correct."),
    (CURL, "curl 5", "NOT_FOUND", "Could not resolve proxy. The given proxy host could not be resolved."),
    (CURL, "curl 6", "NOT_FOUND", "Could not resolve host. The given remote host could not be resolved."),
    (CURL, "curl 7", "UPSTREAM_UNAVAILABLE", "Failed to connect to host."),
    (CURL, "curl 18", "UPSTREAM_CONNECTION_LOST", "Partial file. Only a part of the file was transferred."),
    # curl 22 (HTTP page not retrieved) is left out: the HTTP status it names says what it is.
    (CURL, "curl 23", "SERVER_MISCONFIGURED", "Write error. Curl could not write data to a local filesystem."),
    (CURL, "curl 26", "INVALID_ARGUMENTS", "Read error. Various reading problems."),
    (CURL, "curl 28", "UPSTREAM_TIMEOUT", "Operation timeout. The specified time-out period was reached."),
    (CURL, "curl 35", "UPSTREAM_CONNECTION_LOST", "SSL connect error. The SSL handshaking failed."),
    (CURL, "curl 37", "NOT_FOUND", "FILE could not read file. Failed to open the file. Permissions?"),
    (CURL, "curl 47", "INVALID_ARGUMENTS", "Too many redirects."),
    (CURL, "curl 52", "UPSTREAM_CONNECTION_LOST", "The server did not reply anything."),
    (CURL, "curl 55", "UPSTREAM_CONNECTION_LOST", "Failed sending network data."),
    (CURL, "curl 56", "UPSTREAM_CONNECTION_LOST", "Failure in receiving network data."),
    (CURL, "curl 60", "ACCESS_DENIED", "Peer certificate cannot be authenticated with known CA certificates."),
    (CURL, "curl 67", "NOT_AUTHENTICATED", "The user name, password, or similar was not accepted and curl failed "
     "to log in."),
    (CURL, "curl 78", "NOT_FOUND", "The resource referenced in the URL does not exist."),
    (CURL, "curle couldnt connect", "UPSTREAM_UNAVAILABLE", "Failed to connect to host or proxy."),
    (CURL, "curle couldnt resolve host", "NOT_FOUND", "Could not resolve host."),
    (CURL, "curle operation timedout", "UPSTREAM_TIMEOUT", "Operation timeout."),
    (CURL, "curle unsupported protocol", "INVALID_ARGUMENTS", "Unsupported protocol."),
    (CURL, "curle url malformat", "INVALID_ARGUMENTS", "The URL was not properly formatted."),
    (CURL, "curle login denied", "NOT_AUTHENTICATED", "The remote server denied curl to login."),
    (CURL, "curle got nothing", "UPSTREAM_CONNECTION_LOST", "Nothing was returned from the server."),
    (CURL, "curle recv error", "UPSTREAM_CONNECTION_LOST", "Failure with receiving network data."),
    (CURL, "curle send error", "UPSTREAM_CONNECTION_LOST", "Failed sending network data."),
    (CURL, "curle remote access denied", "ACCESS_DENIED", "We were denied access to the resource given in the URL."),
    # --- sysexits.h (names as Python's os.EX_* has them) ---
    (SYSEXITS, "ex usage", "INVALID_ARGUMENTS", "command line usage error"),
    (SYSEXITS, "ex dataerr", "INVALID_ARGUMENTS", "data format error"),
    (SYSEXITS, "ex noinput", "NOT_FOUND", "cannot open input"),
    (SYSEXITS, "ex nouser", "NOT_FOUND", "addressee unknown"),
    (SYSEXITS, "ex nohost", "NOT_FOUND", "host name unknown"),
    # sysexits(3): "a service is unavailable ... a support program or file does not exist", and a
    # catch-all for "something you wanted to do doesn't work": no transient signal (fourth review).
    (SYSEXITS, "ex unavailable", "UPSTREAM_INTERNAL_ERROR", "service unavailable"),
    (SYSEXITS, "ex software", "UPSTREAM_INTERNAL_ERROR", "internal software error"),
    (SYSEXITS, "ex oserr", "SERVER_MISCONFIGURED", "system error (e.g., can't fork)"),
    (SYSEXITS, "ex osfile", "SERVER_MISCONFIGURED", "critical OS file missing"),
    (SYSEXITS, "ex cantcreat", "SERVER_MISCONFIGURED", "can't create (user) output file"),
    (SYSEXITS, "ex ioerr", "SERVER_MISCONFIGURED", "input/output error"),
    (SYSEXITS, "ex tempfail", "UPSTREAM_UNAVAILABLE", "temp failure; user is invited to retry"),
    (SYSEXITS, "ex protocol", "UPSTREAM_INTERNAL_ERROR", "remote error in protocol"),
    (SYSEXITS, "ex noperm", "ACCESS_DENIED", "permission denied"),
    (SYSEXITS, "ex config", "SERVER_MISCONFIGURED", "configuration error"),
)  # fmt: skip
