// placeholder until the client lands
export {};
