// TURN: short-lived credentials for the relay's coturn; a leaf that both areas use (no area imported).
export { iceServersFor, isTurnUserKey, turnCredential, type IceServer, type IceServers, type TurnSettings } from './credentials.js';
