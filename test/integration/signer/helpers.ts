/** The signer tests log through the suite's capture logger: in memory, and into the scanned log dir. */
export { captureLogger } from "../../helpers/capture-logger.js";
