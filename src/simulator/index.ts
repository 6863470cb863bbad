export { type AdminServer, type AdminTarget, singleShopAdmin, startAdmin } from './admin.js';
export { NO_CHURN, NO_FAULTS } from './faults.js';
export { type Fleet, type FleetShop, fleetCredentials, startFleet } from './fleet.js';
export { startSimulator } from './http-server.js';
export { DEFAULT_CREDENTIALS } from './sim-settings.js';
export type {
  ChurnChange,
  ChurnFault,
  FaultKind,
  Faults,
  FaultsUpdate,
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
