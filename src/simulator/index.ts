export { type AdminServer, type AdminTarget, singleShopAdmin, startAdmin } from './admin.js';
export { NO_FAULTS } from './faults.js';
export { type Fleet, type FleetShop, fleetCredentials, startFleet } from './fleet.js';
export { DEFAULT_CREDENTIALS } from './options.js';
export { startSimulator } from './server.js';
export type {
  FaultKind,
  Faults,
  FieldChange,
  GrantType,
  ListingArrival,
  Move,
  MovingFault,
  Mutation,
  MutationTruth,
  Poison,
  SimCredentials,
  SimItem,
  SimStats,
  Simulator,
  SimulatorOptions,
} from './types.js';
