export declare function seedArticles(file: string, count: number): void;
