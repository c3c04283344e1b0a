/**
 * The library's version (package.json's, checked by a unit test). It names the
 * SharedWorker, so tabs running two versions of the library never share an
 * engine whose wire protocol one of them does not speak.
 */
export const VERSION = "0.1.0";
